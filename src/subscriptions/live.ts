import { randomUUID } from 'node:crypto';
import type { Caller } from '../upstream/caller.ts';
import { Admission, type AdmissionLimits } from './admission.ts';
import { decodeEventId, updatesFrom } from './event-ids.ts';
import { type Feed, type LiveEvent, type Position, StreamInterrupted, type Watcher } from './feed.ts';
import { Poller, type PollSettings } from './poller.ts';
import { Relay } from './relay.ts';
import { subscriberStream } from './subscriber.ts';

/**
 * Subscriptions over a REST API that has no events: the gateway polls for its subscribers.
 * LivePolling composes the parts and knows no feed (feed.ts is the contract; withdrawal-feeds.ts
 * and deposit-feeds.ts offer the subscription fields as Watchers):
 *
 * - admission.ts: `perKey` open subscriptions per key and `max` in all, per process.
 * - poller.ts: one poller per feed (a caller scope and what it watches), however many subscribers
 *   it has; in a fleet, one per feed across all replicas (leases.ts), the others relaying through
 *   Redis. It backs off while nothing changes and stops at a final value, when its last subscriber
 *   leaves, or when the REST API refuses the key (its subscribers get UNAUTHENTICATED or
 *   FORBIDDEN, then their streams end).
 * - relay.ts: subscribers listen on a process-local target, which relays what `events` brings,
 *   and catches up on what a lost Redis subscriber connection missed.
 * - subscriber.ts: each subscriber's stream, repeats dropped.
 *
 * A caller scope is the HMAC of one Authorization value, so every subscriber of a poller sent the
 * same key. The poller keeps that key in memory while it has subscribers and nowhere else: events,
 * Redis channels and lease names carry the scope, never the key.
 */

/** Where a new subscriber stands before its first value: what it is shown first is advanced from here. */
const emptyPosition: Position = { followed: [] };

/** What LivePolling is made with: the poll loop's settings (poller.ts) and the admission limits (admission.ts). */
export interface LiveOptions extends PollSettings, AdmissionLimits {}

export class LivePolling {
  private readonly pollers = new Map<string, Poller>();
  private readonly admission: Admission;
  private readonly relay: Relay;
  /** This process as a lease holder. */
  private readonly owner = randomUUID();
  /** Aborted by close(): every stream ends. */
  private readonly closing = new AbortController();

  private readonly options: LiveOptions;

  constructor(options: LiveOptions) {
    this.options = options;
    this.admission = new Admission(options);
    this.relay = new Relay(options);
  }

  /**
   * A subscription field's stream: `watcher` (from a feed module) built with this engine's client
   * for `caller`, then open(). What the watcher throws refuses the subscription at once.
   */
  watch<T extends { id: string }, S>(
    caller: Caller,
    watcher: Watcher<T, S>,
    after?: string,
  ): Promise<AsyncIterableIterator<LiveEvent<T>>> {
    const { feed, accept, check } = watcher(this.options.client, caller);
    return this.open(caller, feed, accept, check, after);
  }

  /**
   * One subscriber's stream of `feed`, for the request of `caller`: admitted against the limits,
   * listening before its first read so no change falls between, then its poller joined or
   * started. Throws (a GatewayError) when refused, when the first read fails, or when the key is
   * refused. `accept` filters what this subscriber is shown. The stream ends at a last value, an
   * `end` event, close(), or when the consumer returns; its resources are freed then, even if it
   * was never read. `check`, when given, runs once admitted and before anything else (a
   * subscriber's own precondition, e.g. that a wallet is the caller's); what it throws refuses
   * the subscription.
   *
   * `after`, an event id this feed sent to this key (event-ids.ts), resumes: the subscriber is
   * shown first what changed since (Feed.resume, fresh reads with `caller`) instead of what a new
   * subscriber is shown. An id that is not one (EVENT_ID_NOT_RESUMABLE) is refused before
   * anything else.
   */
  async open<T extends { id: string }, S>(
    caller: Caller,
    feed: Feed<T, S>,
    accept: (value: T) => boolean = () => true,
    check?: () => Promise<void>,
    after?: string,
  ): Promise<AsyncIterableIterator<LiveEvent<T>>> {
    // Closing: the client is to retry elsewhere, as one whose stream was interrupted.
    if (this.closing.signal.aborted) throw new StreamInterrupted();
    const position = after === undefined ? undefined : decodeEventId(after, feed.kind, caller.authorization);
    const scope = caller.scope;
    this.admission.admit(scope);
    if (check) {
      try {
        await check();
      } catch (error) {
        this.admission.discharge(scope);
        throw error;
      }
      if (this.closing.signal.aborted) {
        this.admission.discharge(scope);
        throw new StreamInterrupted();
      }
    }
    const listening = new AbortController();
    const stop = () => listening.abort();
    this.closing.signal.addEventListener('abort', stop, { once: true });
    const events = this.relay.listen(feed.name, listening.signal);
    const poller = this.join(feed as Feed<{ id: string }, unknown>, caller.authorization);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      stop();
      this.closing.signal.removeEventListener('abort', stop);
      this.relay.unlisten(feed.name);
      this.leave(poller);
      this.admission.discharge(scope);
      this.options.metrics?.subscriptions(feed.kind, -1);
    };
    this.options.metrics?.subscriptions(feed.kind, 1);
    let initial: { kind: 'update'; value: T; id: string }[];
    try {
      if (position) {
        initial = updatesFrom(
          feed,
          position,
          await this.resume(caller, feed, poller, position),
          caller.authorization,
        );
      } else {
        const state = (await poller.ready(caller)) as S;
        initial = updatesFrom(feed, emptyPosition, feed.initial(state), caller.authorization);
      }
    } catch (error) {
      release();
      throw error;
    }
    return subscriberStream({
      feed,
      initial,
      events,
      accept,
      release,
      interrupted: this.closing.signal,
    });
  }

  /**
   * What a subscriber back at `position` is shown first: what changed since (Feed.resume). Its
   * poller takes the state that resume read when it has none. When it has one (another subscriber
   * of the feed, resuming at the same time or subscribed before), that state was read at another
   * time and the poller's next updates are only what changes after it: were it the later read,
   * what changed between the two would reach this subscriber through neither (a final status
   * missed for good). So this subscriber is also shown one poll from its own read: one read
   * more, and repeats are dropped (subscriber.ts). The same when the poller has stopped meanwhile
   * (at a last value another subscriber's read found).
   */
  private async resume<T extends { id: string }, S>(
    caller: Caller,
    feed: Feed<T, S>,
    poller: Poller,
    position: Position,
  ): Promise<T[]> {
    const resumed = await feed.resume(caller, position);
    if (poller.adopt(resumed.state)) return resumed.changed;
    const since = await feed.poll(caller, resumed.state);
    return [...resumed.changed, ...since.changed];
  }

  /** What runs now: open subscriptions and pollers (tests assert both return to 0). */
  activity(): { subscriptions: number; pollers: number } {
    return { subscriptions: this.admission.open, pollers: this.pollers.size };
  }

  /**
   * The delivery of `events` to this process stopped (its Redis subscriber connection closed):
   * remembers, per feed, the state its subscribers have, for catchUp (relay.ts).
   */
  deliveryLost(): void {
    this.relay.deliveryLost(this.pollers.values());
  }

  /**
   * The delivery of `events` works again: what changed meanwhile goes to the local subscribers
   * (relay.ts). Failures are logged, never thrown.
   */
  catchUp(): Promise<void> {
    return this.relay.catchUp(this.pollers.values());
  }

  /**
   * Interrupts every stream (StreamInterrupted: clients reconnect and resume elsewhere, they are
   * not told the subscription completed) and stops every poller, giving up their leases: at
   * shutdown, before the server closes.
   */
  close(): void {
    this.closing.abort();
    for (const poller of [...this.pollers.values()]) poller.stop();
  }

  private join(feed: Feed<{ id: string }, unknown>, authorization: string): Poller {
    let poller = this.pollers.get(feed.name);
    if (!poller || poller.stopped) {
      poller = new Poller({
        feed,
        authorization,
        owner: this.owner,
        settings: this.options,
        onStop: (stopped) => {
          if (this.pollers.get(stopped.feed.name) === stopped) this.pollers.delete(stopped.feed.name);
        },
      });
      this.pollers.set(feed.name, poller);
    }
    poller.subscribers += 1;
    return poller;
  }

  private leave(poller: Poller): void {
    poller.subscribers -= 1;
    if (poller.subscribers === 0) poller.stop();
  }
}
