import { LRUCache } from 'lru-cache';
import type { Activity, Stage, UpstreamCall } from './call.ts';
import type { Caller } from './caller.ts';
import { deadlinePassed } from './wire.ts';

/**
 * Each key's share of the REST API for expensive requests. A request's first
 * `freeCallsPerRequest` calls (5) of at most FREE_PAGE_SIZE items go at once, always: a normal screen makes one to three, the
 * largest realistic one five, so none of their calls ever waits, however many screens a key sends
 * at once. A request's further calls (the pages of a scan over a whole list, many aliased lists)
 * are its key's expensive ones: at most `callsPerKey` of those, across all the key's requests, are
 * in flight at once (caller scope: Caller.scope, one per API key);
 * the rest wait in the key's own FIFO queue. So one key's expensive requests queue behind each
 * other instead of taking the REST API's time, and the gateway's, from every other key, and
 * another key's call never waits behind them.
 *
 * - A queued call waits at most until its request's deadline; then it fails as the deadline fails
 *   a call on the wire (DEADLINE, so UPSTREAM_TIMEOUT; not retried, not a circuit failure) and is
 *   never sent, nor counted against the call budget.
 * - A POST (a withdrawal) never waits and takes no slot: delaying it could only bring it nearer its
 *   deadline, where an answer lost on the wire leaves its outcome unknown; and GraphQL runs a
 *   mutation's fields one after the other, so a request has at most one POST under way.
 * - A slot is held for the whole attempt, body included, and released when it ends whatever the
 *   outcome; a retry's backoff holds none (this stage is inside retry, transport.ts).
 *
 * - Past its share in flight, a key's expensive calls are also paced: at most `callsPerSecond` a
 *   second on average, a second's worth at once (a token bucket, kept as the time its next call
 *   may go). One expensive call costs a whole REST page of both sides' time
 *   (docs/benchmark.md#figures-behind-design-choices), so calls in flight alone still let one key
 *   keep both busy; the pace bounds the share of their time one key takes. A call that could not go before
 *   its deadline fails at once, unsent, as a queued one does.
 *
 * A merchant with several keys gets one share for all of them once the gateway has learnt they
 * are one merchant's (`shareOf`: merchants.ts, from the wallets their answers name); until then,
 * and for a key that shows no wallet, a share per key. Requests that stay within
 * their first calls are not bounded here (RATE_LIMIT_PER_KEY bounds those). Memory: one entry per
 * key with expensive calls in flight or queued, removed when its last one ends.
 */

export interface FairShareOptions {
  /**
   * The most calls past their request's free ones that one caller scope has in flight at once;
   * 0 (or less) turns the stage off.
   */
  callsPerKey: number;
  /** Expensive calls of one caller scope per second, on average; 0 (or less, or absent): no pace. */
  callsPerSecond?: number;
  /** A request's calls that go at once and take no slot; default FREE_CALLS_PER_REQUEST. */
  freeCallsPerRequest?: number;
  /**
   * Whose share a caller scope's calls take: its merchant's (merchants.ts, Merchants.of), so a
   * merchant's keys share one; default, the scope's own.
   */
  shareOf?: (scope: string) => string;
  /** Called with the caller's scope each time one of its calls has to wait for its share (metrics, tests). */
  onQueued?: (scope: string) => void;
}

/** The most REST calls the largest realistic screen makes (test/integration/gateway/limits.test.ts). */
export const FREE_CALLS_PER_REQUEST = 5;

/**
 * The largest page a free call may read: a wallet screen's scans start with pages of 250
 * (loaders/list-scan.ts, FIRST_SCAN_PAGE_SIZE), an activity feed reads 50. Pages of up to 1000
 * (a scan's next pages, a large window) always count against the key's share and pace.
 */
export const FREE_PAGE_SIZE = 250;

/** The `size` of a list call's path (client.ts writes `?page=…&size=…`); 1 for any other call. */
function pageSizeOf(path: string): number {
  const size = /[?&]size=(\d+)/.exec(path)?.[1];
  return size === undefined ? 1 : Number(size);
}

/** What a scope's share holds: expensive calls in flight, and those waiting, oldest first. */
interface Share {
  inFlight: number;
  waiting: Waiter[];
}

interface Waiter {
  /** Takes the slot the last call handed on, and goes. */
  go: () => void;
}

/** Calls waiting for their scope's share right now (Transport.activity). */
export interface FairShareActivity {
  waiting: number;
}

export class FairShare {
  private readonly shares = new Map<string, Share>();
  /** Attempts each request (its Caller) has started through this stage, retries included. */
  private readonly started = new WeakMap<Caller, number>();
  private readonly options: FairShareOptions;
  private readonly freeCalls: number;
  private queuedCalls = 0;
  /**
   * Each paced scope's next free time (epoch ms, a GCRA's theoretical arrival time), kept only
   * while it is in the future: an entry per key that made expensive calls in the last second.
   */
  private readonly paced = new LRUCache<string, number>({ max: 10_000 });

  constructor(options: FairShareOptions) {
    this.options = options;
    this.freeCalls = options.freeCallsPerRequest ?? FREE_CALLS_PER_REQUEST;
  }

  /** The stage: `next`, once the call's scope has a slot free (see the module's contract). */
  stage(activity: Activity, next: Stage): Stage {
    if (this.options.callsPerKey <= 0) return next;
    return async (call, attempt) => {
      if (this.isFree(call)) return next(call, attempt);
      // Taken once: the slot goes back to the share it came from, whatever is learnt meanwhile.
      const scope = this.options.shareOf?.(call.caller.scope) ?? call.caller.scope;
      await this.pace(scope, call, activity);
      await this.acquire(scope, call, activity);
      try {
        return await next(call, attempt);
      } finally {
        this.release(scope);
      }
    };
  }

  activity(): FairShareActivity {
    return { waiting: this.queuedCalls };
  }

  /**
   * A POST, or one of its request's first calls that reads at most FREE_PAGE_SIZE items: goes at
   * once and takes no slot. A larger page is expensive wherever it comes in its request: five
   * aliased windows of 1000 deposits would otherwise be free, and a key sending them from many
   * requests at once would take the REST API's time from everyone.
   */
  private isFree(call: UpstreamCall): boolean {
    const started = this.started.get(call.caller) ?? 0;
    this.started.set(call.caller, started + 1);
    return call.method === 'POST' || (started < this.freeCalls && pageSizeOf(call.path) <= FREE_PAGE_SIZE);
  }

  /**
   * Waits until `scope` may send another expensive call at its pace (see the module's contract);
   * rejects at once, unsent, when that is past the call's deadline.
   */
  private pace(scope: string, call: UpstreamCall, activity: Activity): Promise<void> | void {
    const rate = this.options.callsPerSecond ?? 0;
    if (rate <= 0) return;
    const interval = 1000 / rate;
    const now = Date.now();
    const due = this.paced.get(scope) ?? now;
    // A second's worth of calls may go at once: a call waits only once `due` is a second ahead.
    const delay = Math.max(0, due - now - (1000 - interval));
    const { deadline } = call.caller;
    if (deadline !== undefined && now + delay >= deadline) return Promise.reject(deadlinePassed());
    const next = Math.max(due, now) + interval;
    this.paced.set(scope, next, { ttl: Math.ceil(next - now) });
    if (delay === 0) return;
    this.options.onQueued?.(call.caller.scope);
    this.queuedCalls++;
    activity.timers++;
    return new Promise((resolve) =>
      setTimeout(() => {
        activity.timers--;
        this.queuedCalls--;
        resolve();
      }, delay),
    );
  }

  /** A slot of `scope`'s share: at once when one is free, else when one is handed on. */
  private acquire(scope: string, call: UpstreamCall, activity: Activity): Promise<void> | void {
    let share = this.shares.get(scope);
    if (!share) {
      share = { inFlight: 0, waiting: [] };
      this.shares.set(scope, share);
    }
    if (share.inFlight < this.options.callsPerKey) {
      share.inFlight++;
      return;
    }
    return this.wait(share, call, activity);
  }

  /** Queues the call until a slot is handed to it, or its deadline passes (then it is dropped, unsent). */
  private wait(share: Share, call: UpstreamCall, activity: Activity): Promise<void> {
    const { deadline } = call.caller;
    const remaining = deadline === undefined ? undefined : deadline - Date.now();
    if (remaining !== undefined && remaining <= 0) return Promise.reject(deadlinePassed());
    this.options.onQueued?.(call.caller.scope);
    this.queuedCalls++;
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = () => {
        this.queuedCalls--;
        if (timer) {
          clearTimeout(timer);
          activity.timers--;
        }
      };
      const waiter: Waiter = {
        go: () => {
          settle();
          resolve();
        },
      };
      share.waiting.push(waiter);
      if (remaining !== undefined) {
        activity.timers++;
        timer = setTimeout(() => {
          timer = undefined;
          activity.timers--;
          share.waiting.splice(share.waiting.indexOf(waiter), 1);
          this.queuedCalls--;
          reject(deadlinePassed());
        }, remaining);
      }
    });
  }

  /** The call ended: its slot goes to the scope's oldest waiting call, else is freed. */
  private release(scope: string): void {
    const share = this.shares.get(scope);
    if (!share) return;
    const next = share.waiting.shift();
    // The slot passes straight on: inFlight stays, so no call arriving meanwhile can take it first.
    if (next) {
      next.go();
      return;
    }
    share.inFlight--;
    if (share.inFlight <= 0) this.shares.delete(scope);
  }
}
