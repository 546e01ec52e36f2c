/**
 * How long this process's event loop could not run, measured by a sampler: an unref'd timer every
 * `resolutionMs` whose lateness is time the loop spent on something else (a long synchronous
 * task, a burst of microtasks, garbage collection, a CPU the machine gave to another process).
 * While the loop is stalled, no timer fires and no socket is read, so an answer that arrived
 * meanwhile sits unread; a timeout that expires during the stall says nothing about the peer.
 *
 * Only gaps of more than STALL_MIN_MS count: a loop that runs every few milliseconds, however busy
 * (a CPU shared with other processes), reads its sockets in time, and its timers are honest.
 *
 * `awakeNow()` is a clock that does not move while the loop is stalled: a bound measured on it
 * (StallAwareTimer) gives a peer the time it was promised, whatever the machine's load. The stall
 * the loop may be coming out of right now (the sampler has not run since) is counted too, so a
 * timer that fires late sees its own lateness as a stall. The same figure as `monitorEventLoopDelay`,
 * kept as a running total rather than a histogram, which is what a deadline needs.
 */
/** Lateness of the sampler below this is the loop being busy, not stalled. */
export const STALL_MIN_MS = 50;

export class LoopStalls {
  private last = performance.now();
  private stalled = 0;
  private longest = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly resolutionMs: number;

  constructor(resolutionMs = 20) {
    this.resolutionMs = resolutionMs;
    this.timer = setInterval(() => this.sample(), resolutionMs);
    this.timer.unref();
  }

  private sample(): void {
    const now = performance.now();
    const late = now - this.last - this.resolutionMs;
    if (late > STALL_MIN_MS) {
      this.stalled += late;
      if (late > this.longest) this.longest = late;
    }
    this.last = now;
  }

  /** The loop's stalled time so far, in ms, including a stall that has just ended. */
  stalledMs(): number {
    const pending = performance.now() - this.last - this.resolutionMs;
    return this.stalled + (pending > STALL_MIN_MS ? pending : 0);
  }

  /** The longest single stall seen so far (for logs and metrics), in ms. */
  longestMs(): number {
    const pending = performance.now() - this.last - this.resolutionMs;
    return Math.max(this.longest, pending > STALL_MIN_MS ? pending : 0);
  }

  /** Milliseconds on a clock that stands still while the loop is stalled. */
  awakeNow(): number {
    return performance.now() - this.stalledMs();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

let processStalls: LoopStalls | undefined;

/** The process's one sampler (the event loop is the process's), started on first use. */
export function loopStalls(): LoopStalls {
  processStalls ??= new LoopStalls();
  return processStalls;
}

/** Why a stall-aware bound ran out. */
export type Expiry =
  /** The peer had its whole bound of the loop's awake time and did not answer. */
  | { kind: 'silent'; waitedMs: number }
  /**
   * The wall-clock cap ran out first: the loop was stalled for most of the wait, so the peer's
   * silence is not shown (its answer may not have been read).
   */
  | { kind: 'stalled'; waitedMs: number; stalledMs: number };

/**
 * A timeout of `boundMs` of the loop's awake time (LoopStalls), and at most `capMs` of wall time.
 * When it fires late it re-arms for what the stall took; when its time is up it first lets the
 * loop read its sockets once (an answer that arrived during a stall is read before the verdict),
 * then calls `onExpiry` unless cancelled meanwhile.
 */
export class StallAwareTimer {
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private refed = true;
  private readonly startWall = performance.now();
  private readonly startAwake: number;
  private readonly stalls: LoopStalls;
  private readonly boundMs: number;
  private readonly capMs: number;
  private readonly onExpiry: (expiry: Expiry) => void;

  constructor(stalls: LoopStalls, boundMs: number, capMs: number, onExpiry: (expiry: Expiry) => void) {
    this.stalls = stalls;
    this.boundMs = boundMs;
    this.capMs = Math.max(capMs, boundMs);
    this.onExpiry = onExpiry;
    this.startAwake = stalls.awakeNow();
    this.arm(boundMs);
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.fire(), Math.max(1, Math.ceil(ms)));
    if (!this.refed) this.timer.unref();
  }

  /** Lets the process exit while this timer runs (as `Timeout.unref`). */
  unref(): this {
    this.refed = false;
    this.timer?.unref();
    return this;
  }

  private fire(): void {
    this.timer = undefined;
    const waited = performance.now() - this.startWall;
    const awake = this.stalls.awakeNow() - this.startAwake;
    if (awake < this.boundMs - 1 && waited < this.capMs) {
      this.arm(Math.min(this.boundMs - awake, this.capMs - waited));
      return;
    }
    const expiry: Expiry =
      awake >= this.boundMs - 1
        ? { kind: 'silent', waitedMs: Math.round(waited) }
        : { kind: 'stalled', waitedMs: Math.round(waited), stalledMs: Math.round(waited - awake) };
    // setImmediate runs after this turn's poll phase: a reply already in the socket is read first.
    this.immediate = setImmediate(() => {
      this.immediate = undefined;
      this.onExpiry(expiry);
    });
    if (!this.refed) this.immediate.unref();
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
  }
}
