import { GraphQLError } from 'graphql';
import type { ErrorCode } from '../errors/error-codes.ts';
import { badUserInput, GatewayError, isGatewayError } from '../errors/errors.ts';
import { INPUT_LIMITS } from '../schema/input-limits.ts';
import type { Caller } from '../upstream/caller.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';

/** The feed contract: live.ts and the feed modules import it, not each other (a new kind: FeedKind). */

export type FeedKind = 'withdrawal_intent' | 'withdrawal_intents' | 'deposits';

/** Why a feed ended for all its subscribers: its poll's error, as a gateway code. */
export type EndCode = 'UNAUTHENTICATED' | 'FORBIDDEN' | 'NOT_FOUND';

/** What a poller publishes on the feed's topic (JSON: it may travel through Redis); `id` is its event id. */
export type LiveEvent<T> = { kind: 'update'; value: T; id: string } | { kind: 'end'; code: EndCode };

/**
 * Where a subscriber stands, as its event id carries it (event-ids.ts): `followed`, the records that
 * may still change, each with its seen version's tag and creation time (ms); `boundary`, the newest
 * record it knows of: one created later is news, one created earlier and not followed was final.
 */
export interface Position {
  boundary?: { at: number; id: string };
  followed: { id: string; tag: string; at: number }[];
}

/** What a poller watches for one caller scope; values carry an id and a version. */
export interface Feed<T extends { id: string }, S> {
  /** Topic and lease name: kind, caller scope and subject. */
  readonly name: string;
  readonly kind: FeedKind;
  /** The first state, read with the subscribing request's own caller. */
  begin(caller: Caller): Promise<S>;
  initial(state: S): T[];
  /** One fresh read: the new state and the values changed since `state`. */
  poll(caller: Caller, state: S): Promise<{ state: S; changed: T[] }>;
  version(value: T): string;
  /** Nothing can follow this value: streams end after it, the poller stops. */
  isLast(value: T): boolean;
  position(state: S): Position;
  /** Where a subscriber at `position` stands once also shown `value`. */
  advance(position: Position, value: T): Position;
  /** What a subscriber at `position` must be shown, and the state; EVENT_ID_NOT_RESUMABLE if too far. */
  resume(caller: Caller, position: Position): Promise<{ state: S; changed: T[] }>;
}

export interface Watch<T extends { id: string }, S> {
  feed: Feed<T, S>;
  /** Everything when absent. */
  accept?: ((value: T) => boolean) | undefined;
  /** A subscriber's own precondition, run once admitted: what it throws refuses the subscription. */
  check?: (() => Promise<void>) | undefined;
}

/** A subscription field's Watch, built with the engine's client; what it throws refuses the subscription. */
export type Watcher<T extends { id: string }, S> = (
  client: MerchantWalletClient,
  caller: Caller,
) => Watch<T, S>;

/** The end an error of a poll means, if any: the key refused, the intent gone. */
export function endCodeOf(error: unknown): EndCode | undefined {
  const code = isGatewayError(error) ? error.code : undefined;
  return code === 'UNAUTHENTICATED' || code === 'FORBIDDEN' || code === 'NOT_FOUND' ? code : undefined;
}

/** Thrown by a stream interrupted at shutdown: transports end it as a dropped connection (reconnect). */
export class StreamInterrupted extends GraphQLError {
  override readonly name = 'StreamInterrupted';
  constructor() {
    // A GraphQLError with a code, so that error masking hands this very error on to the transport.
    super('The gateway is shutting down: reconnect (to another replica) and resume.', {
      extensions: { code: 'UPSTREAM_UNAVAILABLE' satisfies ErrorCode },
    });
  }
}

export function deliver(
  target: Pick<EventTarget, 'dispatchEvent'>,
  name: string,
  event: LiveEvent<unknown>,
): void {
  target.dispatchEvent(new CustomEvent(name, { detail: event }));
}

/** A subscription field's resolve; each event is resolved as a request of its own (GatewayContext.renew). */
export function liveValue<T>(event: LiveEvent<T>, _args: unknown, context: { renew(): void }): T {
  if (event.kind === 'end') {
    eventIds.delete(context);
    throw endError(event.code);
  }
  eventIds.set(context, event.id);
  context.renew();
  return event.value;
}

const eventIds = new WeakMap<object, string>();

/** The event id of the result just resolved (`extensions.eventId`): results resolve one at a time. */
export function eventIdOf(context: object): string | undefined {
  return eventIds.get(context);
}

export const AFTER_DESCRIPTION =
  'Resume from this event id: the `extensions.eventId` of the last result received (a Last-Event-ID header wins). What changed since comes first; nothing is missed across a reconnect or a restart, and an event may come twice. An id not sent to this key, or too old, is refused with EVENT_ID_NOT_RESUMABLE.';

/** The event id to resume from: `Last-Event-ID` (newer than an EventSource URL's `after`), else `after`. */
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

/** The error a stream ends with when its feed ended; only the one-intent feed ends with NOT_FOUND. */
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
