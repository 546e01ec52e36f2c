import { GraphQLError } from 'graphql';
import type { ErrorCode } from '../errors/error-codes.ts';
import { badUserInput, GatewayError, isGatewayError } from '../errors/errors.ts';
import { INPUT_LIMITS } from '../schema/input-limits.ts';
import type { Caller } from '../upstream/caller.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';

/**
 * The feed contract: what the live-polling engine (live.ts) asks of a feed module
 * (withdrawal-feeds.ts, deposit-feeds.ts), what travels on a feed's topic, and what a subscription
 * field resolves an event to. Both sides import this file and not each other, so the engine knows
 * no feed: a new feed kind adds its name to FeedKind (a metrics label) and nothing to the engine.
 */

export type FeedKind = 'withdrawal_intent' | 'withdrawal_intents' | 'deposits';

/** Why a feed ended for all its subscribers: the REST API's answer to its poll, as a gateway code. */
export type EndCode = 'UNAUTHENTICATED' | 'FORBIDDEN' | 'NOT_FOUND';

/**
 * What the poller publishes on the feed's topic (JSON, as it may travel through Redis). `id` is the
 * update's event id (event-ids.ts): where a subscriber stands once shown it.
 */
export type LiveEvent<T> = { kind: 'update'; value: T; id: string } | { kind: 'end'; code: EndCode };

/**
 * Where a subscriber stands in a feed, as an event id carries it (event-ids.ts), so that any
 * replica can compute what changed since from the REST API alone. `followed`: the records that
 * may still change, each with a tag of the version the subscriber saw (versionTag) and its
 * creation time (ms); `boundary`: the newest record created that the subscriber knows of (a list
 * feed's): a record created later is news, and one created earlier and not followed was final
 * already.
 */
export interface Position {
  boundary?: { at: number; id: string };
  followed: { id: string; tag: string; at: number }[];
}

/** What a poller watches for one caller scope. Values carry an id and a version to tell repeats. */
export interface Feed<T extends { id: string }, S> {
  /** Topic and lease name: kind, caller scope and subject. */
  readonly name: string;
  readonly kind: FeedKind;
  /** The first state, read with the subscribing request's own caller: its key is proven now. */
  begin(caller: Caller): Promise<S>;
  /** What a subscriber is shown first, from the state its poller has. */
  initial(state: S): T[];
  /** One fresh read: the new state and the values that changed since `state`. */
  poll(caller: Caller, state: S): Promise<{ state: S; changed: T[] }>;
  /** Two values of one id with the same version are the same news. */
  version(value: T): string;
  /** Nothing can follow this value: the subscriber's stream ends after it, the poller stops. */
  isLast(value: T): boolean;
  /** Where a subscriber stands that has seen everything up to `state`. */
  position(state: S): Position;
  /** Where a subscriber at `position` stands once also shown `value` (one of poll's `changed`). */
  advance(position: Position, value: T): Position;
  /**
   * What a subscriber back at `position` (from its last event id) must be shown, oldest first, and
   * the feed's state now, from fresh reads with `caller`. Throws EVENT_ID_NOT_RESUMABLE when
   * `position` is too far behind to catch up within the feed's bound of reads.
   */
  resume(caller: Caller, position: Position): Promise<{ state: S; changed: T[] }>;
}

/** What one subscriber asks for: the feed it watches, and what of it it is shown. */
export interface Watch<T extends { id: string }, S> {
  feed: Feed<T, S>;
  /** Filters what this subscriber is shown; everything when absent. */
  accept?: ((value: T) => boolean) | undefined;
  /**
   * Runs once the subscription is admitted and before anything else: a subscriber's own
   * precondition (e.g. that a wallet is the caller's). What it throws refuses the subscription.
   */
  check?: (() => Promise<void>) | undefined;
}

/**
 * How a feed module offers a subscription field: the Watch of one subscribing caller, built with
 * the engine's client (resolvers have no client; see GatewayContext). What it throws refuses the
 * subscription before it is admitted.
 */
export type Watcher<T extends { id: string }, S> = (
  client: MerchantWalletClient,
  caller: Caller,
) => Watch<T, S>;

/** The end of a feed an error of its poll means, if it does: the key refused, the intent gone. */
export function endCodeOf(error: unknown): EndCode | undefined {
  const code = isGatewayError(error) ? error.code : undefined;
  return code === 'UNAUTHENTICATED' || code === 'FORBIDDEN' || code === 'NOT_FOUND' ? code : undefined;
}

/**
 * What a subscriber's stream throws when it stops because this process is shutting down (not
 * because the feed ended): the transports end the client's stream as a dropped connection, never
 * as a completed one, so the standard clients reconnect (to another replica, or this one once it
 * is back) instead of finishing. The SSE delivery (plugins/resumable-streams.ts) ends the
 * response without `complete`; the WebSocket bridge (websocket/bridge.ts) closes the socket with 1012.
 */
export class StreamInterrupted extends GraphQLError {
  override readonly name = 'StreamInterrupted';
  constructor() {
    // A GraphQLError with a code, so that error masking hands this very error on to the transport.
    super('The gateway is shutting down: reconnect (to another replica) and resume.', {
      extensions: { code: 'UPSTREAM_UNAVAILABLE' satisfies ErrorCode },
    });
  }
}

/** Puts `event` on the topic `name` of `target`: how pollers publish and relays hand on. */
export function deliver(
  target: Pick<EventTarget, 'dispatchEvent'>,
  name: string,
  event: LiveEvent<unknown>,
): void {
  target.dispatchEvent(new CustomEvent(name, { detail: event }));
}

/**
 * A subscription field's resolve: the event's value, or the error its feed ended with. Each event
 * is resolved as a request of its own (GatewayContext.renew): its nested fields read now, with
 * their own deadline, not through what an earlier event of the stream loaded.
 */
export function liveValue<T>(event: LiveEvent<T>, _args: unknown, context: { renew(): void }): T {
  if (event.kind === 'end') {
    eventIds.delete(context);
    throw endError(event.code);
  }
  eventIds.set(context, event.id);
  context.renew();
  return event.value;
}

/** Per subscription context, the id of the event its field resolved last (liveValue). */
const eventIds = new WeakMap<object, string>();

/**
 * The id of the event a subscription's result was just resolved from: what useResumableStreams
 * adds to the result as `extensions.eventId` (and SSE's `id:`). Results of one subscription are
 * resolved one at a time, so it is the id of the result at hand.
 */
export function eventIdOf(context: object): string | undefined {
  return eventIds.get(context);
}

/** The `after` argument of every subscription field. */
export const AFTER_DESCRIPTION =
  'Resume from this event id: the `extensions.eventId` of the last result received (a Last-Event-ID header wins). What changed since comes first; nothing is missed across a reconnect or a restart, and an event may come twice. An id not sent to this key, or too old, is refused with EVENT_ID_NOT_RESUMABLE.';

/**
 * The event id a subscription resumes from: the request's `Last-Event-ID` header (EventSource
 * sends its last id when it reconnects, so it is newer than an `after` in its URL), else the
 * field's `after` argument; undefined for a subscription that starts afresh.
 */
export function resumeFrom(after: string | null | undefined, context: object): string | undefined {
  const header = (context as { request?: Request }).request?.headers.get('last-event-id');
  // By length before anything reads it: no id this API issues is longer.
  for (const [name, value, field] of [
    ['after', after, ['after']],
    ['Last-Event-ID', header, undefined],
  ] as const) {
    if (value && value.length > INPUT_LIMITS.eventId) {
      throw badUserInput(
        `${name} must be at most ${INPUT_LIMITS.eventId} characters; received ${value.length}`,
        field,
      );
    }
  }
  return header || after || undefined;
}

/**
 * The GraphQL error a subscriber's stream ends with when its feed ended (LiveEvent `end`). Only
 * the one-intent feed can end with NOT_FOUND (the list feeds read pages), hence its wording.
 */
function endError(code: EndCode): GatewayError {
  switch (code) {
    case 'UNAUTHENTICATED':
      return new GatewayError('UNAUTHENTICATED', 'The REST API no longer accepts this API key.', {
        extensions: { http: { status: 401 } },
      });
    case 'FORBIDDEN':
      return new GatewayError('FORBIDDEN', 'This API key may no longer read this data.');
    case 'NOT_FOUND':
      return new GatewayError(
        'NOT_FOUND',
        'The watched withdrawal intent no longer exists for this merchant.',
      );
  }
}
