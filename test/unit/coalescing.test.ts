import { describe, expect, it } from 'vitest';
import { type CachedResponse, loopHasIdleTime, ResponseCache } from '../../src/upstream/cache.ts';

const OK: CachedResponse = { status: 200, json: { code: 'ok' }, text: '{"code":"ok"}' };

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Three identical GETs share one call. When the originator resumes, it schedules "other work" for
 * the next event-loop turn (as a newly arrived request would be read). Returns whether each joiner
 * resumed after that work had run.
 */
async function joinersAfterOtherWork(stagger: boolean, outcome: 'resolve' | 'reject') {
  const cache = new ResponseCache({ ttlMs: 0, maxBytes: 1024, staggerJoiners: () => stagger });
  const upstream = deferred<CachedResponse>();
  let fetches = 0;
  const fetch = () => {
    fetches++;
    return upstream.promise;
  };
  let otherWorkRan = false;
  const seen: boolean[] = [];
  const originator = cache.get('scope', '/wallets', fetch).finally(() => {
    setImmediate(() => {
      otherWorkRan = true;
    });
  });
  const joiners = [1, 2].map((i) =>
    cache.get('scope', '/wallets', fetch).finally(() => {
      seen[i - 1] = otherWorkRan;
    }),
  );
  if (outcome === 'resolve') upstream.resolve(OK);
  else upstream.reject(new Error('upstream down'));
  const settled = await Promise.allSettled([originator, ...joiners]);
  return { fetches, seen, settled, inFlight: cache.inFlightCount };
}

describe('coalesced GETs', () => {
  it('hand the answer to their waiters one event-loop turn apart while the loop has idle time', async () => {
    const { fetches, seen, settled, inFlight } = await joinersAfterOtherWork(true, 'resolve');
    expect(fetches).toBe(1);
    // The second joiner resumes only after work that arrived meanwhile had its turn.
    expect(seen).toEqual([false, true]);
    for (const result of settled) expect(result).toEqual({ status: 'fulfilled', value: OK });
    expect(inFlight).toBe(0);
  });

  it('hand it to every waiter at once when the loop is saturated', async () => {
    const { fetches, seen, settled } = await joinersAfterOtherWork(false, 'resolve');
    expect(fetches).toBe(1);
    expect(seen).toEqual([false, false]);
    for (const result of settled) expect(result).toEqual({ status: 'fulfilled', value: OK });
  });

  it('hand a failure to every waiter, in turn as well', async () => {
    const { seen, settled, inFlight } = await joinersAfterOtherWork(true, 'reject');
    expect(seen).toEqual([false, true]);
    for (const result of settled) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toMatchObject({ message: 'upstream down' });
    }
    expect(inFlight).toBe(0);
  });
});

describe('loopHasIdleTime', () => {
  it('is false after a window the loop spent busy, and true again after an idle one', async () => {
    const hasIdleTime = loopHasIdleTime(0.8, 20);
    expect(hasIdleTime()).toBe(true);
    // Keep the loop busy for a whole window: synchronous work, nothing else can run.
    const until = performance.now() + 60;
    while (performance.now() < until) {
      // spin
    }
    expect(hasIdleTime()).toBe(false);
    // Within the window the last verdict holds; the next window, idle, turns it back.
    expect(hasIdleTime()).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(hasIdleTime()).toBe(true);
  });
});
