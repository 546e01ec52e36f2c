import { randomUUID } from 'node:crypto';
import type { Caller } from '../upstream/caller.ts';
import { Admission, type AdmissionLimits } from './admission.ts';
import { decodeEventId, updatesFrom } from './event-ids.ts';
import { type Feed, type LiveEvent, type Position, StreamInterrupted, type Watcher } from './feed.ts';
import { Poller, type PollSettings } from './poller.ts';
import { Relay } from './relay.ts';
import { subscriberStream } from './subscriber.ts';

/**
 * Subscriptions over a REST API that has no events: LivePolling admits subscribers (admission.ts),
 * runs one poller per feed however many subscribers it has (poller.ts; in a fleet, one across the
 * replicas: leases.ts), hands what pollers publish to each subscriber (relay.ts, subscriber.ts) and
 * knows no feed (feed.ts). The key stays in the poller's memory; events, channels and leases carry
 * the caller scope. docs/subscriptions.md.
 */

const emptyPosition: Position = { followed: [] };

export interface LiveOptions extends PollSettings, AdmissionLimits {}

export class LivePolling {
  private readonly pollers = new Map<string, Poller>();
  private readonly admission: Admission;
  private readonly relay: Relay;
  private readonly owner = randomUUID();
  /** Aborted by close(): every stream ends. */
  private readonly closing = new AbortController();

  private readonly options: LiveOptions;

  constructor(options: LiveOptions) {
    this.options = options;
    this.admission = new Admission(options);
    this.relay = new Relay(options);
  }

  /** A subscription field's stream: `watcher` built for `caller`, then open(); what it throws refuses. */
  watch<T extends { id: string }, S>(
    caller: Caller,
    watcher: Watcher<T, S>,
    after?: string,
  ): Promise<AsyncIterableIterator<LiveEvent<T>>> {
    const { feed, accept, check } = watcher(this.options.client, caller);
    return this.open(caller, feed, accept, check, after);
  }

  /**
   * One subscriber's stream of `feed`: admitted, `check`ed, listening before its first read (so no
   * change falls between), its poller joined or started; with `after` (an event id sent to this key
   * for this feed), first what changed since. Throws a GatewayError when refused, when `check` or the
   * first read fails, or for an id it cannot resume from. It ends at a last value, an `end`, close()
   * or the consumer's return, freeing what it holds even if never read.
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
   * What changed since `position`. A poller that has a state already (read at another time) or has
   * stopped cannot bring what changed between the two reads, so one poll from this read is added.
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

  /** Open subscriptions and pollers (tests assert both return to 0). */
  activity(): { subscriptions: number; pollers: number } {
    return { subscriptions: this.admission.open, pollers: this.pollers.size };
  }

  /** The delivery of `events` stopped (the Redis subscriber connection closed): see Relay.deliveryLost. */
  deliveryLost(): void {
    this.relay.deliveryLost(this.pollers.values());
  }

  /** The delivery of `events` works again: see Relay.catchUp; failures are logged, never thrown. */
  catchUp(): Promise<void> {
    return this.relay.catchUp(this.pollers.values());
  }

  /** At shutdown: interrupts every stream (StreamInterrupted) and stops every poller, giving up its lease. */
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
