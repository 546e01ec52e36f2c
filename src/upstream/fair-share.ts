import { LRUCache } from 'lru-cache';
import type { Activity, Stage, UpstreamCall } from './call.ts';
import type { Caller } from './caller.ts';
import { deadlinePassed } from './wire.ts';

/**
 * Each key's share of the REST API (docs/upstream-client.md#fair-share). A POST, and each of a
 * request's first `freeCallsPerRequest` calls that reads at most FREE_PAGE_SIZE items, goes at once.
 * Any other call is its share's (`shareOf`: the merchant's, else the key's own): it is paced to
 * `callsPerSecond` a second on average, a second's worth at once, then waits in the share's FIFO for
 * one of `callsPerKey` slots, held for the whole attempt. A call whose turn would come after its
 * request's deadline fails at once, unsent and unspent, with DEADLINE (UPSTREAM_TIMEOUT).
 */

export interface FairShareOptions {
  /** Slots of one share for calls past their request's free ones; 0 (or less) turns the stage off. */
  callsPerKey: number;
  /** 0, less or absent: no pace. */
  callsPerSecond?: number;
  /** Default FREE_CALLS_PER_REQUEST. */
  freeCallsPerRequest?: number;
  /** Whose share a caller scope's calls take (Merchants.of); default, the scope's own. */
  shareOf?: (scope: string) => string;
  /** Told each time a call of the scope has to wait (metrics, tests). */
  onQueued?: (scope: string) => void;
}

/** The most REST calls the largest realistic screen makes (test/integration/gateway/limits.test.ts). */
export const FREE_CALLS_PER_REQUEST = 5;

/** The largest page a free call may read: a wallet list's head (loaders/list-pages.ts, HEAD_SIZE). */
export const FREE_PAGE_SIZE = 250;

/** The `size` of a list call's path; 1 for any other call. */
function pageSizeOf(path: string): number {
  const size = /[?&]size=(\d+)/.exec(path)?.[1];
  return size === undefined ? 1 : Number(size);
}

interface Share {
  inFlight: number;
  waiting: Waiter[];
}

interface Waiter {
  go: () => void;
}

export interface FairShareActivity {
  waiting: number;
}

export class FairShare {
  private readonly shares = new Map<string, Share>();
  /** Attempts each request has started through this stage, retries included. */
  private readonly started = new WeakMap<Caller, number>();
  private readonly options: FairShareOptions;
  private readonly freeCalls: number;
  private queuedCalls = 0;
  /** Each paced share's next free time (epoch ms, a GCRA's theoretical arrival time), while in the future. */
  private readonly paced = new LRUCache<string, number>({ max: 10_000 });

  constructor(options: FairShareOptions) {
    this.options = options;
    this.freeCalls = options.freeCallsPerRequest ?? FREE_CALLS_PER_REQUEST;
  }

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

  private isFree(call: UpstreamCall): boolean {
    const started = this.started.get(call.caller) ?? 0;
    this.started.set(call.caller, started + 1);
    return call.method === 'POST' || (started < this.freeCalls && pageSizeOf(call.path) <= FREE_PAGE_SIZE);
  }

  /** Waits for the share's pace; rejects at once, unsent, when that is past the call's deadline. */
  private pace(scope: string, call: UpstreamCall, activity: Activity): Promise<void> | void {
    const rate = this.options.callsPerSecond ?? 0;
    if (rate <= 0) return;
    const interval = 1000 / rate;
    const now = Date.now();
    const due = this.paced.get(scope) ?? now;
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

  private release(scope: string): void {
    const share = this.shares.get(scope);
    if (!share) return;
    const next = share.waiting.shift();
    // The slot passes straight on: no call arriving meanwhile can take it first.
    if (next) {
      next.go();
      return;
    }
    share.inFlight--;
    if (share.inFlight <= 0) this.shares.delete(scope);
  }
}
