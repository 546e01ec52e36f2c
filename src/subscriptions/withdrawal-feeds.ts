import { GatewayError } from '../errors/errors.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';
import type { WithdrawalIntentDTO } from '../upstream/types.ts';
import { notResumable, versionTag } from './event-ids.ts';
import type { Feed, Position, Watcher } from './feed.ts';
import { type ListState, listFeed } from './list-feed.ts';

/**
 * The withdrawal subscriptions: Subscription.withdrawalIntentUpdated watches one intent,
 * Subscription.withdrawalIntentsUpdated the merchant's list. Each is a feed (what a poller reads,
 * feed.ts) and a Watcher the resolver hands to LivePolling.watch (live.ts), which polls it.
 */

/** Statuses after which an intent never changes (see WithdrawalIntentStatus). */
const FINAL = new Set(['completed', 'failed', 'cancelled']);
/** The statuses an intent passes through before a final one, as the REST `statusIn` filter. */
const IN_FLIGHT = ['pending', 'preparing', 'reviewing'];
/**
 * The in-flight intents one page of a list poll reads: the REST API's largest page, so that a
 * merchant with up to this many intents in flight has every one looked at on every poll, at two
 * reads a poll (list-feed.ts: more in flight, a page in turn).
 */
const IN_FLIGHT_WINDOW = 1000;

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
    position: positionOf,
    advance: (_position, intent) => positionOf(intent),
    // The intent now, unless the subscriber saw this very version and it is not final (a final
    // one is shown again: it ends the stream). One read, as a first subscription's.
    async resume(caller, position) {
      if (position.boundary || position.followed.length !== 1 || position.followed[0]?.id !== id) {
        throw notResumable('from another withdrawal intent');
      }
      const intent = await client.getWithdrawalIntent(caller, id, { fresh: true });
      if (!intent) throw notFound(id);
      const seen = position.followed[0]?.tag === versionTag(versionOf(intent));
      return { state: intent, changed: seen && !isFinalWithdrawal(intent) ? [] : [intent] };
    },
  };
}

/** Where a watcher of one intent stands: the version of it it saw. */
function positionOf(intent: WithdrawalIntentDTO): Position {
  return {
    followed: [{ id: intent.id, tag: versionTag(versionOf(intent)), at: Date.parse(intent.createdAt) || 0 }],
  };
}

/**
 * All withdrawal intents of one caller scope, for a list screen: the subscriber is shown each
 * intent created or changed (a new `status` or `updatedAt`) after it subscribed (nothing at first:
 * the screen queried the list). What a poll and a resume read: list-feed.ts.
 */
export function withdrawalIntentsFeed(
  client: MerchantWalletClient,
  scope: string,
): Feed<WithdrawalIntentDTO, ListState> {
  return listFeed<WithdrawalIntentDTO>({
    name: `withdrawal-intents:${scope}`,
    kind: 'withdrawal_intents',
    list: (caller, query) => client.listWithdrawalIntents(caller, query, { fresh: true }),
    get: (caller, id) => client.getWithdrawalIntent(caller, id, { fresh: true }),
    inFlight: IN_FLIGHT,
    version: versionOf,
    inFlightWindow: IN_FLIGHT_WINDOW,
  });
}

/** Subscription.withdrawalIntentUpdated: the intent now, then its changes, until a final status. */
export function withdrawalIntentUpdated(id: string): Watcher<WithdrawalIntentDTO, WithdrawalIntentDTO> {
  return (client, caller) => ({ feed: withdrawalIntentFeed(client, caller.scope, id) });
}

/** Subscription.withdrawalIntentsUpdated: the merchant's intents as they change, with these REST statuses if given. */
export function withdrawalIntentsUpdated(
  statuses: readonly string[] | undefined,
): Watcher<WithdrawalIntentDTO, ListState> {
  return (client, caller) => ({
    feed: withdrawalIntentsFeed(client, caller.scope),
    accept: statuses && ((intent: WithdrawalIntentDTO) => statuses.includes(intent.status)),
  });
}
