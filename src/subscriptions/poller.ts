import type { Logger } from 'pino';
import { isGatewayError } from '../errors/errors.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import type { Caller } from '../upstream/caller.ts';
import type { Callers } from '../upstream/callers.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';
import { updatesFrom } from './event-ids.ts';
import { deliver, endCodeOf, type Feed, type LiveEvent } from './feed.ts';
import type { PollLeases } from './leases.ts';

/**
 * The poll loop of one feed, shared by its subscribers in this process. Each tick it takes or renews
 * the feed's lease, and only the holder polls (fresh reads) and publishes on `events`. The interval
 * doubles from `pollMs` up to `maxPollMs` while nothing changes and drops back at a change. It stops
 * at a last value, when its last subscriber leaves, or at a poll error that ends the feed (it
 * publishes an `end` first); it keeps its subscribers' key until then, and only in memory.
 */

export interface PollSettings {
  client: MerchantWalletClient;
  /** Each poll is a request of its own (Callers.forRequest). */
  callers: Callers;
  /** In-process, or Redis (redis-event-target). */
  events: Pick<EventTarget, 'addEventListener' | 'removeEventListener' | 'dispatchEvent'>;
  leases: PollLeases;
  pollMs: number;
  maxPollMs: number;
  logger: Logger;
  metrics: GatewayMetrics | null;
}

export class Poller {
  readonly feed: Feed<{ id: string }, unknown>;
  /** '' once stopped. */
  authorization: string;
  subscribers = 0;
  /** Undefined until the first read. */
  state: unknown;
  stopped = false;
  private beginning: Promise<unknown> | undefined;
  private interval: number;
  private leading = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly settings: PollSettings;
  private readonly owner: string;
  private readonly onStop: (poller: Poller) => void;

  /** Starts the loop: the first tick comes after `pollMs`. `onStop` hears once that it stopped. */
  constructor(options: {
    feed: Feed<{ id: string }, unknown>;
    authorization: string;
    owner: string;
    settings: PollSettings;
    onStop: (poller: Poller) => void;
  }) {
    this.feed = options.feed;
    this.authorization = options.authorization;
    this.owner = options.owner;
    this.settings = options.settings;
    this.onStop = options.onStop;
    this.interval = options.settings.pollMs;
    this.schedule();
  }

  /** The feed's state, first read with the subscribing request's caller; throws what that read throws. */
  async ready(caller: Caller): Promise<unknown> {
    if (this.state === undefined) {
      // Subscribers arriving together share the first read.
      this.beginning ??= this.feed.begin(caller).finally(() => {
        this.beginning = undefined;
      });
      const state = await this.beginning;
      this.adopt(state);
    }
    return this.state;
  }

  /**
   * Takes a resuming subscriber's fresh `state` when the poller has none and has not stopped, so its
   * first poll compares with it; answers whether it took it.
   */
  adopt(state: unknown): boolean {
    if (this.state !== undefined || this.stopped) return false;
    this.state = state;
    // A feed that starts at its last value is over already.
    if (this.feed.initial(state).some((value) => this.feed.isLast(value))) this.stop();
    return true;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    this.authorization = '';
    this.onStop(this);
    if (this.leading) {
      this.settings.leases.release(this.feed.name, this.owner).catch((error: unknown) => {
        this.settings.logger.debug({ err: (error as Error).message }, 'poll lease release failed');
      });
    }
  }

  private schedule(): void {
    this.timer = setTimeout(() => void this.tick(), this.interval);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    const { feed, settings } = this;
    let changed = false;
    try {
      // The lease outlives two waits of the slowest interval, so a live holder never loses it.
      const leading = await settings.leases.hold(
        feed.name,
        this.owner,
        2 * settings.maxPollMs + settings.callers.requestDeadlineMs,
      );
      if (leading && !this.leading) this.interval = settings.pollMs;
      this.leading = leading;
      if (leading && !this.stopped && this.state !== undefined) {
        changed = await this.poll();
      }
    } catch (error) {
      // Redis unreachable: nobody can be sure to lead; try again at the next tick.
      settings.logger.warn({ err: (error as Error).message, feed: feed.kind }, 'poll lease unavailable');
    }
    if (this.stopped) return;
    this.interval = changed ? settings.pollMs : Math.min(this.interval * 2, settings.maxPollMs);
    this.schedule();
  }

  /** One poll and what it publishes; whether anything changed. */
  private async poll(): Promise<boolean> {
    const { feed } = this;
    const { metrics, logger } = this.settings;
    const caller = this.settings.callers.forRequest(this.authorization);
    try {
      const { state, changed } = await feed.poll(caller, this.state);
      const last = changed.some((value) => feed.isLast(value));
      metrics?.livePoll(feed.kind, last ? 'ended' : changed.length > 0 ? 'changed' : 'unchanged');
      // Its last subscriber left while it read: nobody to tell.
      if (this.stopped) return false;
      const updates = updatesFrom(feed, feed.position(this.state), changed, this.authorization);
      this.state = state;
      for (const update of updates) this.publish(update);
      if (last) this.stop();
      return changed.length > 0;
    } catch (error) {
      const end = endCodeOf(error);
      if (end) {
        metrics?.livePoll(feed.kind, 'ended');
        this.publish({ kind: 'end', code: end });
        this.stop();
        return false;
      }
      // Timeouts, an open circuit, a 5xx: the subscribers wait for the next poll.
      metrics?.livePoll(feed.kind, 'error');
      logger.warn(
        { feed: feed.kind, code: isGatewayError(error) ? error.code : 'INTERNAL' },
        'subscription poll failed',
      );
      return false;
    }
  }

  private publish(event: LiveEvent<unknown>): void {
    deliver(this.settings.events, this.feed.name, event);
  }
}
