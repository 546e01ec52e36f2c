import { randomUUID } from 'node:crypto';
import { on } from 'node:events';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { GatewayError, isGatewayError } from '../errors.ts';
import { loadById, restIdOf } from '../global-ids.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import type { Caller } from '../upstream/caller.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';
import type { DepositDTO, WithdrawalIntentDTO } from '../upstream/types.ts';
import { depositsFeed } from './deposit-feeds.ts';
import type { PollLeases } from './leases.ts';
import { withdrawalIntentFeed, withdrawalIntentsFeed } from './withdrawal-feeds.ts';

/**
 * Subscriptions over a REST API that has no events: the gateway polls for its subscribers.
 *
 * - One poller per feed (a caller scope and what it watches), however many subscribers it has;
 *   in a fleet, one per feed across all replicas (leases.ts), the others relaying through Redis.
 * - The poller reads fresh (no micro-cache) every `pollMs`, doubling the interval up to
 *   `maxPollMs` while nothing changes and dropping back at a change. It stops at a final value,
 *   when its last subscriber leaves, or when the REST API refuses the key (its subscribers get
 *   UNAUTHENTICATED or FORBIDDEN, then their streams end).
 * - A caller scope is the HMAC of one Authorization value, so every subscriber of a poller sent the
 *   same key. The poller keeps that key in memory while it has subscribers and nowhere else: events,
 *   Redis channels and lease names carry the scope, never the key.
 * - Limits: `perKey` open subscriptions per key and `max` in all, per process.
 * - Subscribers listen on a process-local target, which relays what `events` brings. In a fleet,
 *   news published while this process's Redis subscriber connection was down never reaches it;
 *   `deliveryLost` and `catchUp` (wired to that connection) read what was missed and hand it to
 *   the local subscribers, who drop what they have seen already.
 */

export type FeedKind = 'withdrawal_intent' | 'withdrawal_intents' | 'deposits';

/** Why a feed ended for all its subscribers: the REST API's answer to its poll, as a gateway code. */
export type EndCode = 'UNAUTHENTICATED' | 'FORBIDDEN' | 'NOT_FOUND';

/** What the poller publishes on the feed's topic (JSON, as it may travel through Redis). */
export type LiveEvent<T> = { kind: 'update'; value: T } | { kind: 'end'; code: EndCode };

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
}

export interface LiveOptions {
  client: MerchantWalletClient;
  /** Where pollers publish and subscribers listen: in-process, or Redis (redis-event-target). */
  events: Pick<EventTarget, 'addEventListener' | 'removeEventListener' | 'dispatchEvent'>;
  leases: PollLeases;
  pollMs: number;
  maxPollMs: number;
  perKey: number;
  max: number;
  /** Each poll is one request of its own: this deadline and call budget. */
  requestDeadlineMs: number;
  maxUpstreamCallsPerRequest: number;
  logger: Logger;
  metrics: GatewayMetrics | null;
}

interface Poller {
  readonly feed: Feed<{ id: string }, unknown>;
  authorization: string;
  subscribers: number;
  state: unknown;
  /** The first read while it runs. */
  beginning: Promise<unknown> | undefined;
  interval: number;
  leading: boolean;
  timer: NodeJS.Timeout | undefined;
  stopped: boolean;
}

/** What a feed's subscribers were last known to have seen, kept while news could not reach them. */
interface Missed {
  readonly feed: Feed<{ id: string }, unknown>;
  readonly authorization: string;
  readonly since: unknown;
}

/** Versions remembered per subscriber to drop repeats (a new leader re-reading, say); oldest go first. */
const MAX_SEEN = 1_000;

export class LivePolling {
  private readonly pollers = new Map<string, Poller>();
  private readonly openPerScope = new Map<string, number>();
  private openCount = 0;
  /** This process as a lease holder. */
  private readonly owner = randomUUID();
  /** Aborted by close(): every stream ends. */
  private readonly closing = new AbortController();
  /** Where subscribers listen: what `events` brings for their feeds, and what catchUp found. */
  private readonly local = new EventTarget();
  /** Per feed name with local subscribers: how many, and the listener relaying `events` to `local`. */
  private readonly relays = new Map<string, { listeners: number; relay: (event: Event) => void }>();
  /** Feeds whose news may have been lost while the delivery of `events` was down (deliveryLost). */
  private readonly missed = new Map<string, Missed>();
  /** Between deliveryLost and catchUp. */
  private deliveryDown = false;

  private readonly options: LiveOptions;

  constructor(options: LiveOptions) {
    this.options = options;
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
   */
  async open<T extends { id: string }, S>(
    caller: Caller,
    feed: Feed<T, S>,
    accept: (value: T) => boolean = () => true,
    check?: () => Promise<void>,
  ): Promise<AsyncIterableIterator<LiveEvent<T>>> {
    if (this.closing.signal.aborted) {
      throw new GatewayError('UPSTREAM_UNAVAILABLE', 'The gateway is shutting down; subscribe again.');
    }
    const scope = caller.cacheScope;
    this.admit(scope);
    if (check) {
      try {
        await check();
      } catch (error) {
        this.discharge(scope);
        throw error;
      }
      if (this.closing.signal.aborted) {
        this.discharge(scope);
        throw new GatewayError('UPSTREAM_UNAVAILABLE', 'The gateway is shutting down; subscribe again.');
      }
    }
    const listening = new AbortController();
    const stop = () => listening.abort();
    this.closing.signal.addEventListener('abort', stop, { once: true });
    const events = on(this.local, feed.name, { signal: listening.signal });
    this.listen(feed.name);
    const poller = this.join(feed as Feed<{ id: string }, unknown>, caller.authorization);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      stop();
      this.closing.signal.removeEventListener('abort', stop);
      this.unlisten(feed.name);
      this.leave(poller);
      this.discharge(scope);
      this.options.metrics?.subscriptions(feed.kind, -1);
    };
    this.options.metrics?.subscriptions(feed.kind, 1);
    let initial: T[];
    try {
      if (poller.state === undefined) {
        // Subscribers arriving together share the first read.
        poller.beginning ??= feed.begin(caller).finally(() => {
          poller.beginning = undefined;
        });
        const state = await poller.beginning;
        poller.state ??= state;
        // A feed that starts at its last value is over already.
        if (feed.initial(poller.state as S).some((value) => feed.isLast(value))) this.stop(poller);
      }
      initial = feed.initial(poller.state as S);
    } catch (error) {
      release();
      throw error;
    }

    const seen = new Map<string, string>();
    async function* stream(): AsyncGenerator<LiveEvent<T>> {
      try {
        for (const value of initial) {
          seen.set(value.id, feed.version(value));
          if (accept(value)) yield { kind: 'update', value };
          if (feed.isLast(value)) return;
        }
        for await (const [message] of events) {
          const event = (message as CustomEvent<LiveEvent<T>>).detail;
          if (event.kind === 'end') {
            yield event;
            return;
          }
          const { value } = event;
          const version = feed.version(value);
          if (seen.get(value.id) === version) continue;
          seen.delete(value.id);
          seen.set(value.id, version);
          if (seen.size > MAX_SEEN) seen.delete(seen.keys().next().value as string);
          if (accept(value)) yield event;
          if (feed.isLast(value)) return;
        }
      } catch (error) {
        // Aborted: the consumer left or the gateway is closing; the stream just ends.
        if ((error as Error).name !== 'AbortError') throw error;
      } finally {
        release();
      }
    }
    const generator = stream();
    // A generator that was never started skips its `finally` on return(): release here too.
    const iterator: AsyncIterableIterator<LiveEvent<T>> = {
      [Symbol.asyncIterator]: () => iterator,
      next: () => generator.next(),
      return: (value?: unknown) => {
        release();
        return generator.return(value as undefined);
      },
      throw: (error?: unknown) => {
        release();
        return generator.throw(error);
      },
    };
    return iterator;
  }

  /** Subscription.withdrawalIntentUpdated: the intent now, then its changes, until a final status. */
  withdrawalIntent(caller: Caller, id: string) {
    return this.open(caller, withdrawalIntentFeed(this.options.client, caller.cacheScope, id));
  }

  /** Subscription.withdrawalIntentsUpdated: the merchant's intents as they change, with these REST statuses if given. */
  withdrawalIntents(caller: Caller, statuses: readonly string[] | undefined) {
    return this.open(
      caller,
      withdrawalIntentsFeed(this.options.client, caller.cacheScope),
      statuses && ((intent: WithdrawalIntentDTO) => statuses.includes(intent.status)),
    );
  }

  /**
   * Subscription.depositsUpdated: the merchant's deposits as they appear and change status, only
   * those into wallet `walletId` (a global or REST id, as the client gave it) and with these REST
   * statuses when given. One feed per caller scope serves every wallet and filter. The wallet is
   * checked as `wallet(id:)` checks it: a malformed id is BAD_USER_INPUT before anything else, and
   * a wallet the REST API does not show this key (unknown, or another merchant's: one answer) is
   * NOT_FOUND before anything is polled.
   */
  deposits(
    caller: Caller,
    filter: { walletId?: string | undefined; statuses?: readonly string[] | undefined },
  ) {
    const { walletId: given, statuses } = filter;
    const field = ['walletId'];
    const walletId = given === undefined ? undefined : restIdOf(given, 'Wallet', field);
    return this.open(
      caller,
      depositsFeed(this.options.client, caller.cacheScope),
      (deposit: DepositDTO) =>
        (walletId === undefined || deposit.wallet.id === walletId) &&
        (statuses === undefined || statuses.includes(deposit.status)),
      given === undefined
        ? undefined
        : async () => {
            const { client } = this.options;
            if (await loadById((restId) => client.getWallet(caller, restId), given, 'Wallet', field)) return;
            throw new GatewayError('NOT_FOUND', `No wallet ${walletId} exists for this merchant.`, {
              extensions: { id: walletId },
            });
          },
    );
  }

  /** What runs now: open subscriptions and pollers (tests assert both return to 0). */
  activity(): { subscriptions: number; pollers: number } {
    return { subscriptions: this.openCount, pollers: this.pollers.size };
  }

  /**
   * The delivery of `events` to this process stopped (its Redis subscriber connection closed):
   * remembers, per feed, the state its subscribers have, for catchUp. The first loss counts until
   * catchUp; feeds begun meanwhile are remembered by catchUp itself.
   */
  deliveryLost(): void {
    this.deliveryDown = true;
    for (const poller of this.pollers.values()) this.remember(poller);
  }

  /**
   * The delivery of `events` works again: one fresh read per feed that still has local
   * subscribers, and what changed since they were last served goes to them (not to the fleet:
   * other processes did not lose it). Subscribers drop repeats. Failures are logged; the feed's
   * next change brings its news as usual.
   */
  async catchUp(): Promise<void> {
    // The first connection, or another 'ready' after one catch-up: nothing was lost.
    if (!this.deliveryDown) return;
    this.deliveryDown = false;
    for (const poller of this.pollers.values()) this.remember(poller);
    const missed = [...this.missed.values()];
    this.missed.clear();
    await Promise.all(
      missed.map(async ({ feed, authorization, since }) => {
        try {
          const { changed } = await feed.poll(this.pollCaller(authorization), since);
          this.options.metrics?.livePoll(feed.kind, changed.length > 0 ? 'changed' : 'unchanged');
          for (const value of changed) deliver(this.local, feed.name, { kind: 'update', value });
        } catch (error) {
          // The key refused or the intent gone: that `end` was lost too; the streams end now.
          const end = endCodeOf(error);
          if (end) {
            this.options.metrics?.livePoll(feed.kind, 'ended');
            deliver(this.local, feed.name, { kind: 'end', code: end });
            return;
          }
          this.options.metrics?.livePoll(feed.kind, 'error');
          this.options.logger.warn(
            { feed: feed.kind, code: isGatewayError(error) ? error.code : 'INTERNAL' },
            'subscription catch-up read failed',
          );
        }
      }),
    );
  }

  /** Ends every stream and stops every poller, giving up their leases: at shutdown, before the server closes. */
  close(): void {
    this.closing.abort();
    for (const poller of [...this.pollers.values()]) this.stop(poller);
  }

  private remember(poller: Poller): void {
    if (poller.stopped || poller.state === undefined || this.missed.has(poller.feed.name)) return;
    this.missed.set(poller.feed.name, {
      feed: poller.feed,
      authorization: poller.authorization,
      since: poller.state,
    });
  }

  /** Relays `events` of this feed to the local subscribers while it has some. */
  private listen(name: string): void {
    const relayed = this.relays.get(name);
    if (relayed) {
      relayed.listeners += 1;
      return;
    }
    // An event is dispatched once: the local one is a copy.
    const relay = (event: Event) =>
      deliver(this.local, name, (event as CustomEvent<LiveEvent<unknown>>).detail);
    this.options.events.addEventListener(name, relay);
    this.relays.set(name, { listeners: 1, relay });
  }

  private unlisten(name: string): void {
    const relayed = this.relays.get(name);
    if (!relayed) return;
    relayed.listeners -= 1;
    if (relayed.listeners > 0) return;
    this.options.events.removeEventListener(name, relayed.relay);
    this.relays.delete(name);
    // Its key is not needed any more.
    this.missed.delete(name);
  }

  private admit(scope: string): void {
    const forKey = this.openPerScope.get(scope) ?? 0;
    if (forKey >= this.options.perKey) {
      throw new GatewayError(
        'SUBSCRIPTION_LIMIT_EXCEEDED',
        `This API key has ${forKey} open subscriptions, the most allowed (SUBSCRIPTIONS_PER_KEY); end one first.`,
        { extensions: { limit: this.options.perKey } },
      );
    }
    if (this.openCount >= this.options.max) {
      throw new GatewayError(
        'SUBSCRIPTION_LIMIT_EXCEEDED',
        'The gateway holds as many subscriptions as it may (MAX_SUBSCRIPTIONS); try again later.',
        { extensions: { limit: this.options.max } },
      );
    }
    this.openPerScope.set(scope, forKey + 1);
    this.openCount += 1;
  }

  private discharge(scope: string): void {
    const left = (this.openPerScope.get(scope) ?? 1) - 1;
    if (left > 0) this.openPerScope.set(scope, left);
    else this.openPerScope.delete(scope);
    this.openCount -= 1;
  }

  private join(feed: Feed<{ id: string }, unknown>, authorization: string): Poller {
    let poller = this.pollers.get(feed.name);
    if (!poller || poller.stopped) {
      poller = {
        feed,
        authorization,
        subscribers: 0,
        state: undefined,
        beginning: undefined,
        interval: this.options.pollMs,
        leading: false,
        timer: undefined,
        stopped: false,
      };
      this.pollers.set(feed.name, poller);
      this.schedule(poller);
    }
    poller.subscribers += 1;
    return poller;
  }

  private leave(poller: Poller): void {
    poller.subscribers -= 1;
    if (poller.subscribers === 0) this.stop(poller);
  }

  private stop(poller: Poller): void {
    if (poller.stopped) return;
    poller.stopped = true;
    clearTimeout(poller.timer);
    // Forget the key with the poller.
    poller.authorization = '';
    if (this.pollers.get(poller.feed.name) === poller) this.pollers.delete(poller.feed.name);
    if (poller.leading) {
      this.options.leases.release(poller.feed.name, this.owner).catch((error: unknown) => {
        this.options.logger.debug({ err: (error as Error).message }, 'poll lease release failed');
      });
    }
  }

  private schedule(poller: Poller): void {
    poller.timer = setTimeout(() => void this.tick(poller), poller.interval);
    poller.timer.unref();
  }

  private async tick(poller: Poller): Promise<void> {
    if (poller.stopped) return;
    const { feed } = poller;
    const { options } = this;
    let changed = false;
    try {
      // The lease outlives two waits of the slowest interval, so a live holder never loses it.
      const leading = await options.leases.hold(
        feed.name,
        this.owner,
        2 * options.maxPollMs + options.requestDeadlineMs,
      );
      if (leading && !poller.leading) poller.interval = options.pollMs;
      poller.leading = leading;
      if (leading && !poller.stopped && poller.state !== undefined) {
        changed = await this.poll(poller);
      }
    } catch (error) {
      // Redis unreachable: nobody can be sure to lead; try again at the next tick.
      options.logger.warn({ err: (error as Error).message, feed: feed.kind }, 'poll lease unavailable');
    }
    if (poller.stopped) return;
    poller.interval = changed ? options.pollMs : Math.min(poller.interval * 2, options.maxPollMs);
    this.schedule(poller);
  }

  /** One poll and what it publishes; whether anything changed. */
  private async poll(poller: Poller): Promise<boolean> {
    const { feed } = poller;
    const { metrics, logger } = this.options;
    const caller = this.pollCaller(poller.authorization);
    try {
      const { state, changed } = await feed.poll(caller, poller.state);
      const last = changed.some((value) => feed.isLast(value));
      metrics?.livePoll(feed.kind, last ? 'ended' : changed.length > 0 ? 'changed' : 'unchanged');
      // Its last subscriber left while it read: nobody to tell.
      if (poller.stopped) return false;
      poller.state = state;
      for (const value of changed) this.publish(feed.name, { kind: 'update', value });
      if (last) this.stop(poller);
      return changed.length > 0;
    } catch (error) {
      const end = endCodeOf(error);
      if (end) {
        metrics?.livePoll(feed.kind, 'ended');
        this.publish(feed.name, { kind: 'end', code: end });
        this.stop(poller);
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

  /** A poll is a request of its own: this deadline and call budget. */
  private pollCaller(authorization: string): Caller {
    return this.options.client.caller(
      authorization,
      Date.now() + this.options.requestDeadlineMs,
      this.options.maxUpstreamCallsPerRequest,
    );
  }

  private publish(name: string, event: LiveEvent<unknown>): void {
    deliver(this.options.events, name, event);
  }
}

/** The end of a feed an error of its poll means, if it does: the key refused, the intent gone. */
function endCodeOf(error: unknown): EndCode | undefined {
  const code = isGatewayError(error) ? error.code : undefined;
  return code === 'UNAUTHENTICATED' || code === 'FORBIDDEN' || code === 'NOT_FOUND' ? code : undefined;
}

function deliver(target: Pick<EventTarget, 'dispatchEvent'>, name: string, event: LiveEvent<unknown>): void {
  target.dispatchEvent(new CustomEvent(name, { detail: event }));
}

/**
 * A subscription field's resolve: the event's value, or the error its feed ended with. Each event
 * is resolved as a request of its own (GatewayContext.renew): its nested fields read now, with
 * their own deadline, not through what an earlier event of the stream loaded.
 */
export function liveValue<T>(event: LiveEvent<T>, _args: unknown, context: { renew(): void }): T {
  if (event.kind === 'end') throw endError(event.code);
  context.renew();
  return event.value;
}

/** LivePolling's settings as the configuration gives them; the caller adds the live parts. */
export function liveSettings(config: Config) {
  return {
    ...config.subscriptions,
    requestDeadlineMs: config.requestDeadlineMs,
    maxUpstreamCallsPerRequest: config.maxUpstreamCallsPerRequest,
  } satisfies Partial<LiveOptions>;
}

/** The GraphQL error a subscriber's stream ends with when its feed ended (LiveEvent `end`). */
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
