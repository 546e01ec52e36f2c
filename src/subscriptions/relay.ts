import { on } from 'node:events';
import { isGatewayError } from '../errors/errors.ts';
import { updatesFrom } from './event-ids.ts';
import { deliver, endCodeOf, type Feed, type LiveEvent } from './feed.ts';
import type { Poller, PollSettings } from './poller.ts';

/**
 * Fan-out to this process's subscribers: one listener on `events` per feed with local subscribers,
 * relaying to a process-local target. `deliveryLost` and `catchUp` (wired to the Redis subscriber
 * connection) read what news published meanwhile never brought, and hand it to the local subscribers.
 */

/** What a feed's subscribers were last known to have seen, kept while news could not reach them. */
interface Missed {
  readonly feed: Feed<{ id: string }, unknown>;
  readonly authorization: string;
  readonly since: unknown;
}

export class Relay {
  private readonly local = new EventTarget();
  private readonly relays = new Map<string, { listeners: number; relay: (event: Event) => void }>();
  private readonly missed = new Map<string, Missed>();
  private deliveryDown = false;
  private readonly settings: PollSettings;

  constructor(settings: PollSettings) {
    this.settings = settings;
  }

  /** One subscriber's events of `name` until `signal` aborts (an AbortError); one `unlisten` per call. */
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
    this.missed.delete(name);
  }

  /** Remembers the state each feed's subscribers have, for catchUp; the first loss counts until catchUp. */
  deliveryLost(pollers: Iterable<Poller>): void {
    this.deliveryDown = true;
    for (const poller of pollers) this.remember(poller);
  }

  /**
   * One fresh read per feed that still has local subscribers; what changed goes to them only (other
   * processes did not lose it). Failures are logged: the feed's next change brings its news as usual.
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
          // That `end` was lost too: the streams end now.
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
