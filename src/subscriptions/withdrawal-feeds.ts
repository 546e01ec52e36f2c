import { GatewayError } from '../errors/errors.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';
import type { WithdrawalIntentDTO } from '../upstream/types.ts';
import { notResumable, versionTag } from './event-ids.ts';
import type { Feed, Position, Watcher } from './feed.ts';
import { type ListState, listFeed } from './list-feed.ts';

/** The withdrawal subscriptions' feeds (feed.ts) and the Watchers their resolvers hand to LivePolling. */

const FINAL = new Set(['completed', 'failed', 'cancelled']);
/** The statuses before a final one, as the REST `statusIn` filter. */
const IN_FLIGHT = ['pending', 'preparing', 'reviewing'];
/** The in-flight page of a list poll: the REST API's largest (docs/subscriptions.md#what-a-poll-costs). */
const IN_FLIGHT_WINDOW = 1000;

export const isFinalWithdrawal = (intent: WithdrawalIntentDTO) => FINAL.has(intent.status);
const versionOf = (intent: WithdrawalIntentDTO) => `${intent.status}|${intent.updatedAt}`;

function notFound(id: string): GatewayError {
  return new GatewayError('NOT_FOUND', `No withdrawal intent ${id} exists for this merchant.`, {
    extensions: { id },
  });
}

/** One intent of one caller scope, read by id: the intent now, then each change, until a final status. */
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
    // Nothing when the subscriber saw this version, unless it is final (it ends the stream).
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

function positionOf(intent: WithdrawalIntentDTO): Position {
  return {
    followed: [{ id: intent.id, tag: versionTag(versionOf(intent)), at: Date.parse(intent.createdAt) || 0 }],
  };
}

/**
 * All withdrawal intents of one caller scope, for a list screen: each intent created or changed (a
 * new `status` or `updatedAt`) after subscribing, nothing at first.
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

export function withdrawalIntentUpdated(id: string): Watcher<WithdrawalIntentDTO, WithdrawalIntentDTO> {
  return (client, caller) => ({ feed: withdrawalIntentFeed(client, caller.scope, id) });
}

/** Subscription.withdrawalIntentsUpdated: with these REST statuses, if given. */
export function withdrawalIntentsUpdated(
  statuses: readonly string[] | undefined,
): Watcher<WithdrawalIntentDTO, ListState> {
  return (client, caller) => ({
    feed: withdrawalIntentsFeed(client, caller.scope),
    accept: statuses && ((intent: WithdrawalIntentDTO) => statuses.includes(intent.status)),
  });
}
