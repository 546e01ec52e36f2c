import { on } from 'node:events';
import { isGatewayError } from '../errors/errors.ts';
import { updatesFrom } from './event-ids.ts';
import { deliver, endCodeOf, type Feed, type LiveEvent } from './feed.ts';
import type { Poller, PollSettings } from './poller.ts';

/**
 * Fan-out to this process's subscribers, and catch-up when news could not reach them.
 *
 * Subscribers listen on a process-local target, which relays what `events` brings (whichever
 * process's poller published it): one listener on `events` per feed with local subscribers, however
 * many they are. In a fleet, news published while this process's Redis subscriber connection was
 * down never reaches it; `deliveryLost` and `catchUp` (wired to that connection) read what was
 * missed and hand it to the local subscribers, who drop what they have seen already.
 */

/** What a feed's subscribers were last known to have seen, kept while news could not reach them. */
interface Missed {
  readonly feed: Feed<{ id: string }, unknown>;
  readonly authorization: string;
  readonly since: unknown;
}

export class Relay {
  /** Where subscribers listen: what `events` brings for their feeds, and what catchUp found. */
  private readonly local = new EventTarget();
  /** Per feed name with local subscribers: how many, and the listener relaying `events` to `local`. */
  private readonly relays = new Map<string, { listeners: number; relay: (event: Event) => void }>();
  /** Feeds whose news may have been lost while the delivery of `events` was down (deliveryLost). */
  private readonly missed = new Map<string, Missed>();
  /** Between deliveryLost and catchUp. */
  private deliveryDown = false;
  private readonly settings: PollSettings;

  constructor(settings: PollSettings) {
    this.settings = settings;
  }

  /**
   * One subscriber's events of feed `name`, until `signal` aborts (the iteration then throws an
   * AbortError). Each call must be matched by one `unlisten(name)`.
   */
  listen(name: string, signal: AbortSignal): AsyncIterable<unknown[]> {
    const events = on(this.local, name, { signal });
    const relayed = this.relays.get(name);
    if (relayed) {
      relayed.listeners += 1;
      return events;
    }
    // An event is dispatched once: the local one is a copy.
    const relay = (event: Event) =>
      deliver(this.local, name, (event as CustomEvent<LiveEvent<unknown>>).detail);
    this.settings.events.addEventListener(name, relay);
    this.relays.set(name, { listeners: 1, relay });
    return events;
  }

  unlisten(name: string): void {
    const relayed = this.relays.get(name);
    if (!relayed) return;
    relayed.listeners -= 1;
    if (relayed.listeners > 0) return;
    this.settings.events.removeEventListener(name, relayed.relay);
    this.relays.delete(name);
    // Its key is not needed any more.
    this.missed.delete(name);
  }

  /**
   * The delivery of `events` to this process stopped: remembers, per feed of `pollers`, the state
   * its subscribers have, for catchUp. The first loss counts until catchUp; feeds begun meanwhile
   * are remembered by catchUp itself.
   */
  deliveryLost(pollers: Iterable<Poller>): void {
    this.deliveryDown = true;
    for (const poller of pollers) this.remember(poller);
  }

  /**
   * The delivery of `events` works again: one fresh read per feed that still has local
   * subscribers, and what changed since they were last served goes to them (not to the fleet:
   * other processes did not lose it). Subscribers drop repeats. Failures are logged; the feed's
   * next change brings its news as usual.
   */
  async catchUp(pollers: Iterable<Poller>): Promise<void> {
    // The first connection, or another 'ready' after one catch-up: nothing was lost.
    if (!this.deliveryDown) return;
    this.deliveryDown = false;
    for (const poller of pollers) this.remember(poller);
    const missed = [...this.missed.values()];
    this.missed.clear();
    const { metrics, logger } = this.settings;
    await Promise.all(
      missed.map(async ({ feed, authorization, since }) => {
        try {
          const { changed } = await feed.poll(this.settings.callers.forRequest(authorization), since);
          metrics?.livePoll(feed.kind, changed.length > 0 ? 'changed' : 'unchanged');
          for (const update of updatesFrom(feed, feed.position(since), changed, authorization)) {
            deliver(this.local, feed.name, update);
          }
        } catch (error) {
          // The key refused or the intent gone: that `end` was lost too; the streams end now.
          const end = endCodeOf(error);
          if (end) {
            metrics?.livePoll(feed.kind, 'ended');
            deliver(this.local, feed.name, { kind: 'end', code: end });
            return;
          }
          metrics?.livePoll(feed.kind, 'error');
          logger.warn(
            { feed: feed.kind, code: isGatewayError(error) ? error.code : 'INTERNAL' },
            'subscription catch-up read failed',
          );
        }
      }),
    );
  }

  private remember(poller: Poller): void {
    if (poller.stopped || poller.state === undefined || this.missed.has(poller.feed.name)) return;
    this.missed.set(poller.feed.name, {
      feed: poller.feed,
      authorization: poller.authorization,
      since: poller.state,
    });
  }
}
