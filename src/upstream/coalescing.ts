import { performance } from 'node:perf_hooks';
import type { UpstreamResponse } from './call.ts';
import type { Read } from './reads.ts';

/**
 * Identical GETs in flight share one call. Its answer is handed to the requests that joined it one
 * event-loop turn (setImmediate) per waiter: without turns, they all resume in the same tick and
 * finish their GraphQL work back to back, and a request arriving meanwhile waits behind all of
 * them before its own upstream call even starts. With turns, the server reads new requests in
 * between (docs/benchmark.md#why-the-caches-are-built-this-way).
 *
 * Turns spread the waiters out in time, and requests spread out coalesce less on their next call,
 * so turns are only taken where that is cheap:
 * - for small answers (≤ TURNS_MAX_BYTES, such as a wallet list): a call that brings a page of 250
 *   deposits costs the REST API and this process far more than the turns save, and must stay shared;
 * - for no longer than the call itself took: past that, the remaining waiters get it at once;
 * - never while the event loop is saturated (`staggerJoiners`): then nothing can start earlier,
 *   and every extra turn is CPU taken from the requests.
 */

/** One GET in flight, as the cache sees it (InFlightCalls.find / start). */
export interface InFlightCall {
  readonly call: Promise<UpstreamResponse>;
  /** Where its answer is cached, once it is (set by the cache); null: not cached. */
  stored: Read | null;
}

interface Entry extends InFlightCall {
  turn: Promise<void>;
  startedAt: number;
  settledAt: number;
  took: number;
  small: boolean;
}

/** Answers up to this size are handed out in turns. */
const TURNS_MAX_BYTES = 32 * 1024;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * True while the event loop was less than `threshold` busy over the last `windowMs` (event loop
 * utilization, sampled at most once per window).
 */
export function loopHasIdleTime(threshold = 0.8, windowMs = 100): () => boolean {
  let sample = performance.eventLoopUtilization();
  let sampledAt = performance.now();
  let idle = true;
  return () => {
    const now = performance.now();
    if (now - sampledAt >= windowMs) {
      const current = performance.eventLoopUtilization();
      idle = performance.eventLoopUtilization(current, sample).utilization < threshold;
      sample = current;
      sampledAt = now;
    }
    return idle;
  };
}

/** The GETs in flight, by cache key, and their hand-out to the requests that join them. */
export class InFlightCalls {
  private readonly calls = new Map<string, Entry>();
  private readonly staggerJoiners: () => boolean;
  private readonly now: () => number;

  /**
   * `staggerJoiners`: whether to hand an answer out one turn per waiter now; default: while the loop
   * has idle time. `now`: the clock that times calls and turns; a test's clock, or performance.now.
   */
  constructor(
    staggerJoiners: () => boolean = loopHasIdleTime(),
    now: () => number = () => performance.now(),
  ) {
    this.staggerJoiners = staggerJoiners;
    this.now = now;
  }

  /** The call in flight under `key`, if any. */
  find(key: string): InFlightCall | undefined {
    return this.calls.get(key);
  }

  /** Registers `call` under `key` until it settles; joiners of it get their answer in turns. */
  start(key: string, call: Promise<UpstreamResponse>): InFlightCall {
    const entry: Entry = {
      call: call.finally(() => this.calls.delete(key)),
      stored: null,
      turn: Promise.resolve(),
      startedAt: this.now(),
      settledAt: 0,
      took: 0,
      small: true,
    };
    // The first joiner's turn comes once the call has settled, either way.
    const settled = (response?: UpstreamResponse) => {
      entry.settledAt = this.now();
      entry.took = entry.settledAt - entry.startedAt;
      entry.small = (response?.text.length ?? 0) <= TURNS_MAX_BYTES;
    };
    entry.turn = entry.call.then(settled, () => settled());
    this.calls.set(key, entry);
    return entry;
  }

  /** The answer of `call`, in this joiner's turn; `then` runs in that turn, before the answer is handed on. */
  join(call: InFlightCall, then: () => void): Promise<UpstreamResponse> {
    const entry = call as Entry;
    entry.turn = entry.turn.then(() => (this.takesTurns(entry) ? nextTurn() : undefined));
    return entry.turn.then(() => {
      then();
      return entry.call;
    });
  }

  /** Distinct GETs in flight. */
  get size(): number {
    return this.calls.size;
  }

  /** Whether the next waiter of this call gets its own event-loop turn. */
  private takesTurns(entry: Entry): boolean {
    return entry.small && this.now() - entry.settledAt < entry.took && this.staggerJoiners();
  }
}
