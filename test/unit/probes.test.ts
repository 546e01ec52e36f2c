import { describe, expect, it } from 'vitest';
import { cachedCheck } from '../../src/plugins/health.ts';

describe('a readiness check (cachedCheck)', () => {
  it('runs once for any number of concurrent probes, and reuses its answer while it is fresh', async () => {
    let calls = 0;
    const check = cachedCheck(
      async () => {
        calls++;
        return true;
      },
      { timeoutMs: 1_000, cacheMs: 60_000 },
    );
    const answers = await Promise.all(Array.from({ length: 300 }, () => check()));
    expect(answers.every(Boolean)).toBe(true);
    expect(calls).toBe(1);
    expect(await check()).toBe(true);
    expect(calls).toBe(1);
  });

  it('counts a check that never settles as failed at its timeout, and asks again once the answer is stale', async () => {
    let calls = 0;
    const check = cachedCheck(
      () => {
        calls++;
        return new Promise<boolean>(() => {});
      },
      { timeoutMs: 20, cacheMs: 0 },
    );
    expect(await Promise.all([check(), check()])).toEqual([false, false]);
    expect(calls).toBe(1);
    expect(await check()).toBe(false);
    expect(calls).toBe(2);
  });

  it('counts a check that throws as failed', async () => {
    const check = cachedCheck(
      async () => {
        throw new Error('connection refused');
      },
      { timeoutMs: 1_000, cacheMs: 0 },
    );
    expect(await check()).toBe(false);
  });
});
