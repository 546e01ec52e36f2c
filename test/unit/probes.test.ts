import { describe, expect, it } from 'vitest';
import { cachedCheck } from '../../src/plugins/health-checks.ts';

describe('a readiness check (cachedCheck)', () => {
  it('runs once for any number of concurrent probes, and reuses its answer while it is fresh', async () => {
    let calls = 0;
    const check = cachedCheck(
      async () => {
        calls++;
        return true;
      },
      { answerMs: 1_000, checkTimeoutMs: 1_000, cacheMs: 60_000 },
    );
    const answers = await Promise.all(Array.from({ length: 300 }, () => check()));
    expect(answers.every(Boolean)).toBe(true);
    expect(calls).toBe(1);
    expect(await check()).toBe(true);
    expect(calls).toBe(1);
  });

  it('answers within answerMs while a check hangs, and counts the check as failed at checkTimeoutMs', async () => {
    let calls = 0;
    const check = cachedCheck(
      () => {
        calls++;
        return new Promise<boolean>(() => {});
      },
      { answerMs: 20, checkTimeoutMs: 200, cacheMs: 0 },
    );
    // No earlier answer: not ready, at answerMs, while the one check goes on.
    expect(await Promise.all([check(), check()])).toEqual([false, false]);
    expect(calls).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 250));
    // Failed at its timeout; the next probe starts another.
    expect(await check()).toBe(false);
    expect(calls).toBe(2);
  });

  it('keeps the previous answer while a slow check runs: slow is not down', async () => {
    let calls = 0;
    let settled = 0;
    const check = cachedCheck(
      async () => {
        calls++;
        await new Promise((resolve) => setTimeout(resolve, 100));
        settled++;
        return true;
      },
      { answerMs: 20, checkTimeoutMs: 1_000, cacheMs: 0 },
    );
    expect(await check()).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 120));
    // The first check found the dependency up; the second is as slow, and the probe does not wait for it.
    expect(await check()).toBe(true);
    expect({ calls, settled }).toEqual({ calls: 2, settled: 1 });
  });

  it('counts a check that throws as failed', async () => {
    const check = cachedCheck(
      async () => {
        throw new Error('connection refused');
      },
      { answerMs: 1_000, checkTimeoutMs: 1_000, cacheMs: 0 },
    );
    expect(await check()).toBe(false);
  });
});
