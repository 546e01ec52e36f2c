import { performance } from 'node:perf_hooks';
import type { UpstreamResponse } from './call.ts';
import type { Read } from './reads.ts';

/**
 * Identical GETs in flight share one call. Its joiners get the answer one event-loop turn apart
 * (setImmediate), so requests arriving meanwhile are read in between; only for answers of at most
 * TURNS_MAX_BYTES, for no longer than the call took, and while `staggerJoiners` says the loop has
 * idle time. Why: docs/upstream-client.md#micro-cache-and-coalescing.
 */

export interface InFlightCall {
  readonly call: Promise<UpstreamResponse>;
  /** Where its answer is cached (set by the cache); null: not cached. */
  stored: Read | null;
}

interface Entry extends InFlightCall {
  turn: Promise<void>;
  startedAt: number;
  settledAt: number;
  took: number;
  small: boolean;
}

const TURNS_MAX_BYTES = 32 * 1024;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** True while event loop utilisation stayed under `threshold` over the last `windowMs`. */
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

export class InFlightCalls {
  private readonly calls = new Map<string, Entry>();
  private readonly staggerJoiners: () => boolean;
  private readonly now: () => number;

  /** `now` times calls and turns (a test's clock, or performance.now). */
  constructor(
    staggerJoiners: () => boolean = loopHasIdleTime(),
    now: () => number = () => performance.now(),
  ) {
    this.staggerJoiners = staggerJoiners;
    this.now = now;
  }

  find(key: string): InFlightCall | undefined {
    return this.calls.get(key);
  }

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

  /** The answer of `call`, in this joiner's turn; `then` runs in that turn, before the answer is handed. */
  join(call: InFlightCall, then: () => void): Promise<UpstreamResponse> {
    const entry = call as Entry;
    entry.turn = entry.turn.then(() => (this.takesTurns(entry) ? nextTurn() : undefined));
    return entry.turn.then(() => {
      then();
      return entry.call;
    });
  }

  get size(): number {
    return this.calls.size;
  }

  private takesTurns(entry: Entry): boolean {
    return entry.small && this.now() - entry.settledAt < entry.took && this.staggerJoiners();
  }
}
