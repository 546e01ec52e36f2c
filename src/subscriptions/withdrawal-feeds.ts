import { GatewayError } from '../errors.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';
import type { WithdrawalIntentDTO } from '../upstream/types.ts';
import type { Feed, Watcher } from './feed.ts';

/**
 * The withdrawal subscriptions: Subscription.withdrawalIntentUpdated watches one intent,
 * Subscription.withdrawalIntentsUpdated the merchant's list. Each is a feed (what a poller reads,
 * feed.ts) and a Watcher the resolver hands to LivePolling.watch (live.ts), which polls it.
 */

/** Statuses after which an intent never changes (see WithdrawalIntentStatus). */
const FINAL = new Set(['completed', 'failed', 'cancelled']);
/** The statuses an intent passes through before a final one, as the REST `statusIn` filter. */
const IN_FLIGHT = ['pending', 'preparing', 'reviewing'];

export const isFinalWithdrawal = (intent: WithdrawalIntentDTO) => FINAL.has(intent.status);
const versionOf = (intent: WithdrawalIntentDTO) => `${intent.status}|${intent.updatedAt}`;

function notFound(id: string): GatewayError {
  return new GatewayError('NOT_FOUND', `No withdrawal intent ${id} exists for this merchant.`, {
    extensions: { id },
  });
}

/**
 * One withdrawal intent of one caller scope: GET /withdrawal-intents/{id} per poll. A subscriber
 * is shown the intent as it is now, then each change; the stream ends after a final status.
 */
export function withdrawalIntentFeed(
  client: MerchantWalletClient,
  scope: string,
  id: string,
): Feed<WithdrawalIntentDTO, WithdrawalIntentDTO> {
  return {
    name: `withdrawal-intent:${scope}:${id}`,
    kind: 'withdrawal_intent',
    async begin(caller) {
      const intent = await client.getWithdrawalIntent(caller, id);
      if (!intent) throw notFound(id);
      return intent;
    },
    initial: (intent) => [intent],
    async poll(caller, previous) {
      const intent = await client.getWithdrawalIntent(caller, id, { fresh: true });
      if (!intent) throw notFound(id);
      return { state: intent, changed: versionOf(intent) === versionOf(previous) ? [] : [intent] };
    },
    version: versionOf,
    isLast: isFinalWithdrawal,
  };
}

/** The newest intents read per poll; a merchant creating more than this many between two polls loses some news. */
const NEWEST = 50;
/** Intents still in flight but no longer among the newest, read one by one per poll, at most. */
const MAX_TRACKED = 20;

type Seen = Map<string, { version: string; final: boolean }>;

/**
 * All withdrawal intents of one caller scope, for a list screen: the subscriber is shown each
 * intent created or changed after it subscribed (nothing at first: the screen queried the list).
 * A poll reads the newest NEWEST intents, plus, one by one, the in-flight intents older than
 * those it already watches (up to MAX_TRACKED), so a change of an older pending intent still
 * shows.
 */
export function withdrawalIntentsFeed(
  client: MerchantWalletClient,
  scope: string,
): Feed<WithdrawalIntentDTO, Seen> {
  const remember = (seen: Seen, intent: WithdrawalIntentDTO) =>
    seen.set(intent.id, { version: versionOf(intent), final: isFinalWithdrawal(intent) });
  return {
    name: `withdrawal-intents:${scope}`,
    kind: 'withdrawal_intents',
    async begin(caller) {
      const [newest, inFlight] = await Promise.all([
        client.listWithdrawalIntents(caller, { page: 1, size: NEWEST }, { fresh: true }),
        client.listWithdrawalIntents(
          caller,
          { page: 1, size: MAX_TRACKED, statusIn: IN_FLIGHT },
          { fresh: true },
        ),
      ]);
      const seen: Seen = new Map();
      for (const intent of [...newest.items, ...inFlight.items]) remember(seen, intent);
      return seen;
    },
    initial: () => [],
    async poll(caller, previous) {
      const newest = await client.listWithdrawalIntents(caller, { page: 1, size: NEWEST }, { fresh: true });
      const onPage = new Set(newest.items.map((intent) => intent.id));
      const older = [...previous]
        .filter(([id, { final }]) => !final && !onPage.has(id))
        .slice(0, MAX_TRACKED)
        .map(([id]) => id);
      const olderIntents = await Promise.all(
        older.map((id) => client.getWithdrawalIntent(caller, id, { fresh: true })),
      );
      const state: Seen = new Map();
      const changed: WithdrawalIntentDTO[] = [];
      // Oldest first, so a subscriber sees changes in the order they likely happened.
      for (const intent of [...olderIntents.filter((i) => i !== null), ...[...newest.items].reverse()]) {
        if (previous.get(intent.id)?.version !== versionOf(intent)) changed.push(intent);
        if (onPage.has(intent.id) || !isFinalWithdrawal(intent)) remember(state, intent);
      }
      return { state, changed };
    },
    version: versionOf,
    isLast: () => false,
  };
}

/** Subscription.withdrawalIntentUpdated: the intent now, then its changes, until a final status. */
export function withdrawalIntentUpdated(id: string): Watcher<WithdrawalIntentDTO, WithdrawalIntentDTO> {
  return (client, caller) => ({ feed: withdrawalIntentFeed(client, caller.cacheScope, id) });
}

/** Subscription.withdrawalIntentsUpdated: the merchant's intents as they change, with these REST statuses if given. */
export function withdrawalIntentsUpdated(
  statuses: readonly string[] | undefined,
): Watcher<WithdrawalIntentDTO, Seen> {
  return (client, caller) => ({
    feed: withdrawalIntentsFeed(client, caller.cacheScope),
    accept: statuses && ((intent: WithdrawalIntentDTO) => statuses.includes(intent.status)),
  });
}
