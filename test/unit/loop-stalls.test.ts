import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { type Expiry, LoopStalls, StallAwareTimer } from '../../src/shared/loop-stalls.ts';

/**
 * The loop's awake clock and the timer measured on it. A synchronous busy wait is a stall of
 * known length; a busy machine can only make stalls longer, so each figure here is a lower bound
 * or a kind, never an upper bound on time.
 */

function stallLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

const expiryOf = (stalls: LoopStalls, boundMs: number, capMs: number, stallMs: number) =>
  new Promise<Expiry>((resolve) => {
    new StallAwareTimer(stalls, boundMs, capMs, resolve);
    stallLoop(stallMs);
  });

let stalls: LoopStalls;
afterEach(() => stalls?.stop());

describe('LoopStalls', () => {
  it('counts a busy wait as stalled time, also before its sampler has run again', async () => {
    stalls = new LoopStalls(10);
    await sleep(30);
    const before = stalls.stalledMs();
    stallLoop(300);
    // Read at once, as a timer firing right after the stall would.
    expect(stalls.stalledMs() - before).toBeGreaterThanOrEqual(250);
    await sleep(30);
    expect(stalls.stalledMs() - before).toBeGreaterThanOrEqual(250);
    expect(stalls.longestMs()).toBeGreaterThanOrEqual(250);
  });

  it('keeps an awake clock that stands still during a stall', async () => {
    stalls = new LoopStalls(10);
    await sleep(30);
    const wall = performance.now();
    const awake = stalls.awakeNow();
    stallLoop(300);
    expect(performance.now() - wall - (stalls.awakeNow() - awake)).toBeGreaterThanOrEqual(250);
  });
});

describe('StallAwareTimer', () => {
  it('gives its bound again after a stall: expires as silence, having waited the stall and the bound', async () => {
    stalls = new LoopStalls(10);
    const expiry = await expiryOf(stalls, 100, 2_000, 400);
    expect(expiry.kind).toBe('silent');
    expect(expiry.waitedMs).toBeGreaterThanOrEqual(400 + 50);
  });

  it('past its wall-clock cap with the loop stalled throughout, expires as a stall, not silence', async () => {
    stalls = new LoopStalls(10);
    const expiry = await expiryOf(stalls, 100, 300, 500);
    expect(expiry).toEqual({ kind: 'stalled', waitedMs: expect.any(Number), stalledMs: expect.any(Number) });
    expect((expiry as { stalledMs: number }).stalledMs).toBeGreaterThanOrEqual(400);
  });

  it('cancelled, never expires', async () => {
    stalls = new LoopStalls(10);
    let expired = false;
    const timer = new StallAwareTimer(stalls, 20, 100, () => {
      expired = true;
    });
    timer.cancel();
    await sleep(200);
    expect(expired).toBe(false);
  });
});
