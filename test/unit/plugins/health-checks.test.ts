import { createSchema, createYoga } from 'graphql-yoga';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PROBE_BOUNDS, type Readiness, useHealthChecks } from '../../../src/plugins/health-checks.ts';

const schema = createSchema({
  typeDefs: 'type Query { balance: String }',
  resolvers: { Query: { balance: () => '1' } },
});

/** A check whose answers the test gives: each call waits for the next `answer`. */
function controlled() {
  const pending: ((ok: boolean | Error) => void)[] = [];
  let calls = 0;
  const check = () => {
    calls++;
    return new Promise<boolean>((resolve, reject) => {
      pending.push((ok) => (ok instanceof Error ? reject(ok) : resolve(ok)));
    });
  };
  const answer = (ok: boolean | Error) => {
    for (const settle of pending.splice(0)) settle(ok);
  };
  return { check, answer, calls: () => calls };
}

function gateway(checks: { upstream: () => Promise<boolean>; idempotencyStore: () => Promise<boolean> }) {
  let shuttingDown = false;
  const readiness: Readiness = { release: '0.3.0', store: 'in process', shuttingDown: () => shuttingDown };
  const yoga = createYoga({ schema, logging: false, plugins: [useHealthChecks({ checks, readiness })] });
  const probe = async (path: string) => {
    const response = await yoga.fetch(`http://yoga${path}`);
    return { status: response.status, body: await response.json() };
  };
  const shutDown = () => {
    shuttingDown = true;
  };
  return { probe, shutDown, yoga };
}

const up = () => Promise.resolve(true);
const READY = {
  status: 200,
  body: { status: 'ready', upstream: 'ok', idempotencyStore: 'ok', store: 'in process', version: '0.3.0' },
};

describe('useHealthChecks', () => {
  it('answers /healthz at once, checking nothing', async () => {
    const upstream = vi.fn(up);
    const { probe } = gateway({ upstream, idempotencyStore: up });
    expect(await probe('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(upstream).not.toHaveBeenCalled();
  });

  it('answers /readyz 200 with each dependency, the store and the release', async () => {
    const { probe } = gateway({ upstream: up, idempotencyStore: up });
    expect(await probe('/readyz')).toEqual(READY);
  });

  it('is not ready when the REST API is unreachable or its check throws; an unreachable store leaves it ready', async () => {
    const down = gateway({ upstream: () => Promise.resolve(false), idempotencyStore: up });
    expect(await down.probe('/readyz')).toEqual({
      status: 503,
      body: { ...READY.body, status: 'upstream unreachable', upstream: 'unreachable' },
    });
    const throwing = gateway({
      upstream: () => Promise.reject(new Error('ECONNREFUSED')),
      idempotencyStore: up,
    });
    expect((await throwing.probe('/readyz')).status).toBe(503);
    const noStore = gateway({ upstream: up, idempotencyStore: () => Promise.resolve(false) });
    expect(await noStore.probe('/readyz')).toEqual({
      status: 200,
      body: { ...READY.body, idempotencyStore: 'unreachable' },
    });
  });

  it('answers 503 at once once the process is shutting down, checking nothing, and serves the rest', async () => {
    const upstream = vi.fn(up);
    const { probe, shutDown, yoga } = gateway({ upstream, idempotencyStore: up });
    shutDown();
    expect(await probe('/readyz')).toEqual({
      status: 503,
      body: { status: 'shutting down', store: 'in process', version: '0.3.0' },
    });
    expect(upstream).not.toHaveBeenCalled();
    const query = await yoga.fetch('http://yoga/graphql?query=%7Bbalance%7D', {
      headers: { accept: 'application/json' },
    });
    expect(await query.json()).toEqual({ data: { balance: '1' } });
  });

  describe('in time', () => {
    beforeEach(() => {
      vi.useFakeTimers();
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    it('makes one check for many probes at once, and reuses its answer for cacheMs', async () => {
      const upstream = controlled();
      const { probe } = gateway({ upstream: upstream.check, idempotencyStore: up });
      const probes = Promise.all([probe('/readyz'), probe('/readyz'), probe('/readyz')]);
      await vi.advanceTimersByTimeAsync(0);
      upstream.answer(true);
      expect((await probes).map((p) => p.status)).toEqual([200, 200, 200]);
      expect(upstream.calls()).toBe(1);
      await vi.advanceTimersByTimeAsync(PROBE_BOUNDS.cacheMs - 1);
      expect((await probe('/readyz')).status).toBe(200);
      expect(upstream.calls()).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      const next = probe('/readyz');
      await vi.advanceTimersByTimeAsync(0);
      expect(upstream.calls()).toBe(2);
      upstream.answer(false);
      expect((await next).status).toBe(503);
    });

    it('answers within answerMs what the previous check found while a slow check runs, and its verdict after', async () => {
      const upstream = controlled();
      const { probe } = gateway({ upstream: upstream.check, idempotencyStore: up });
      // The first check, before any has settled: not ready.
      const first = probe('/readyz');
      await vi.advanceTimersByTimeAsync(PROBE_BOUNDS.answerMs);
      expect((await first).status).toBe(503);
      // It settles after 3 s, still within checkTimeoutMs: a slow REST API keeps the gateway ready.
      await vi.advanceTimersByTimeAsync(3_000 - PROBE_BOUNDS.answerMs);
      upstream.answer(true);
      await vi.advanceTimersByTimeAsync(0);
      expect((await probe('/readyz')).status).toBe(200);
      expect(upstream.calls()).toBe(1);
      // The next one hangs: answered from the previous (ready) within answerMs.
      await vi.advanceTimersByTimeAsync(PROBE_BOUNDS.cacheMs);
      const during = probe('/readyz');
      await vi.advanceTimersByTimeAsync(PROBE_BOUNDS.answerMs);
      expect((await during).status).toBe(200);
      // Past checkTimeoutMs it counts as failed.
      await vi.advanceTimersByTimeAsync(PROBE_BOUNDS.checkTimeoutMs - PROBE_BOUNDS.answerMs);
      expect((await probe('/readyz')).status).toBe(503);
      expect(upstream.calls()).toBe(2);
    });
  });
});
