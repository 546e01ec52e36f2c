import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../src/shared/deep-freeze.ts';
import { ResponseCache } from '../../src/upstream/cache.ts';
import type { UpstreamResponse } from '../../src/upstream/call.ts';
import { InFlightCalls, loopHasIdleTime } from '../../src/upstream/coalescing.ts';
import { RequestReads } from '../../src/upstream/reads.ts';

const OK: UpstreamResponse = { status: 200, json: { code: 'ok' }, text: '{"code":"ok"}' };
const BIG_TEXT = JSON.stringify({ code: 'ok', data: 'x'.repeat(40 * 1024) });
const BIG: UpstreamResponse = { status: 200, json: JSON.parse(BIG_TEXT), text: BIG_TEXT };

const KEY = 'scope:GET:/wallets';

/**
 * One GET and `joiners` identical ones sharing it (InFlightCalls, as the cache uses it); the
 * upstream answers after `callMs`. Each waiter, when it resumes, works for `workMs` and then
 * schedules other work for the next event-loop turn (as the server would read a newly arrived
 * request). Returns, for each joiner, how many of those other pieces of work had run before it
 * resumed. Time is a test clock that only the call and the work move, so the turns do not depend on
 * how fast or busy the machine is.
 */
async function coalesce(options: {
  stagger: boolean;
  outcome?: 'resolve' | 'reject';
  answer?: UpstreamResponse;
  joiners?: number;
  callMs?: number;
  workMs?: number;
}) {
  const { stagger, outcome = 'resolve', answer = OK, joiners = 2, callMs = 30, workMs = 0 } = options;
  let now = 0;
  const calls = new InFlightCalls(
    () => stagger,
    () => now,
  );
  let answerCall = () => {};
  const call = new Promise<UpstreamResponse>((resolve, reject) => {
    answerCall = () => {
      now += callMs;
      if (outcome === 'resolve') resolve(answer);
      else reject(new Error('upstream down'));
    };
  });
  // As ResponseCache.get: an async function, so each waiter resumes as many ticks later as there.
  const get = async () => {
    const pending = calls.find(KEY);
    if (pending) return calls.join(pending, () => {});
    return calls.start(KEY, call).call;
  };
  let otherWork = 0;
  const resumed = () => {
    now += workMs;
    setImmediate(() => {
      otherWork++;
    });
  };
  const seen: number[] = [];
  const originator = get().finally(resumed);
  const waiting = Array.from({ length: joiners }, (_, i) =>
    get().finally(() => {
      seen[i] = otherWork;
      resumed();
    }),
  );
  answerCall();
  const settled = await Promise.allSettled([originator, ...waiting]);
  return { seen, settled, inFlight: calls.size };
}

describe('coalesced GETs', () => {
  it('share one call through the cache, and every request gets its answer', async () => {
    const cache = new ResponseCache({ ttlMs: 0, maxBytes: 1024, staggerJoiners: () => true });
    let fetches = 0;
    const fetch = () => {
      fetches++;
      return new Promise<UpstreamResponse>((resolve) => setTimeout(() => resolve(OK), 30));
    };
    const settled = await Promise.allSettled(
      Array.from({ length: 4 }, () => cache.get('scope', '/wallets', fetch)),
    );
    expect(fetches).toBe(1);
    for (const result of settled) expect(result).toEqual({ status: 'fulfilled', value: OK });
    expect(cache.inFlightCount).toBe(0);
  });

  it('hand the answer to their waiters one event-loop turn apart while the loop has idle time', async () => {
    const { seen, settled, inFlight } = await coalesce({ stagger: true, joiners: 3 });
    // The first joiner resumes in the originator's turn, each later one a turn later: after the
    // work that arrived meanwhile.
    expect(seen).toEqual([0, 1, 2]);
    for (const result of settled) expect(result).toEqual({ status: 'fulfilled', value: OK });
    expect(inFlight).toBe(0);
  });

  it('hand it to every waiter at once when the loop is saturated', async () => {
    const { seen, settled } = await coalesce({ stagger: false, joiners: 3 });
    expect(seen).toEqual([0, 0, 0]);
    for (const result of settled) expect(result).toEqual({ status: 'fulfilled', value: OK });
  });

  it('spread the waiters over no longer than the call took', async () => {
    // The call takes 100 ms and each waiter works 40 ms: the turn of a joiner is decided when the
    // one before it resumes, at 0, 40, 80 (< 100: own turns) and 120 ms (≥ 100: the rest at once).
    const { seen } = await coalesce({ stagger: true, joiners: 5, callMs: 100, workMs: 40 });
    expect(seen).toEqual([0, 1, 2, 2, 2]);
  });

  it('hand a large answer (a page of 250 deposits) to every waiter at once: it must stay shared', async () => {
    const { seen, settled } = await coalesce({ stagger: true, joiners: 3, answer: BIG });
    expect(seen).toEqual([0, 0, 0]);
    for (const result of settled) expect(result).toEqual({ status: 'fulfilled', value: BIG });
  });

  it('hand a failure to every waiter, in turn as well', async () => {
    const { seen, settled, inFlight } = await coalesce({ stagger: true, outcome: 'reject' });
    expect(seen).toEqual([0, 1]);
    for (const result of settled) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toMatchObject({ message: 'upstream down' });
    }
    expect(inFlight).toBe(0);
  });
});

describe('loopHasIdleTime', () => {
  it('is false after a window the loop spent busy, and true again after an idle one', async () => {
    // Windows of 200 ms, far longer than a busy machine keeps this process from running between
    // two lines, so each verdict is the window's the test means.
    const hasIdleTime = loopHasIdleTime(0.8, 200);
    expect(hasIdleTime()).toBe(true);
    // Keep the loop busy for a whole window: synchronous work, nothing else can run.
    const until = performance.now() + 300;
    while (performance.now() < until) {
      // spin
    }
    expect(hasIdleTime()).toBe(false);
    // Within the window the last verdict holds; the next window, idle, turns it back.
    expect(hasIdleTime()).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hasIdleTime()).toBe(true);
  });
});

describe('the micro-cache', () => {
  /** Two identical GETs, one after the other, with the upstream answering `answer`: how many calls it saw. */
  async function callsFor(answer: UpstreamResponse): Promise<number> {
    const cache = new ResponseCache({ ttlMs: 60_000, maxBytes: 1024 * 1024, staggerJoiners: () => false });
    let fetches = 0;
    const fetch = async () => {
      fetches++;
      return answer;
    };
    await cache.get('scope', '/wallets', fetch);
    await cache.get('scope', '/wallets', fetch);
    return fetches;
  }
  const answer = (body: unknown): UpstreamResponse => ({
    status: 200,
    json: body,
    text: JSON.stringify(body),
  });

  it('keeps a well-formed envelope', async () => {
    expect(await callsFor(answer({ code: 'ok', message: 'ok', data: [] }))).toBe(1);
  });

  it('keeps no 2xx body that is not the envelope the spec promises: the next read asks again', async () => {
    for (const body of [[], { data: [] }, { code: 'error', data: null }, 'ok', null, { code: 'ok' }]) {
      expect(await callsFor(answer(body))).toBe(2);
    }
    expect(await callsFor({ status: 200, json: undefined, text: '<html>' })).toBe(2);
  });
});

describe('shared answers cannot be changed by one of their requests', () => {
  it('a cache hit hands out the parsed answer of the miss, frozen all the way down, without parsing again', async () => {
    const text = JSON.stringify({
      code: 'ok',
      data: [
        { id: 'w1', assets: [{ balance: { availableAmount: '1' } }] },
        { id: 'w2', assets: [] },
      ],
    });
    const cache = new ResponseCache({ ttlMs: 60_000, maxBytes: 1_000_000 });
    let fetches = 0;
    const fetch = async (): Promise<UpstreamResponse> => {
      fetches++;
      return { status: 200, text, json: JSON.parse(text) };
    };
    const first = await cache.get('scope', '/wallets', fetch);
    const hit = await cache.get('scope', '/wallets', fetch);
    expect(fetches).toBe(1);
    expect(hit.json).toBe(first.json);
    type Balance = { balance: { availableAmount: string } };
    const asset = (hit.json as { data: { assets: Balance[] }[] }).data[0]?.assets[0] as Balance;
    expect(() => {
      asset.balance.availableAmount = '1000000';
    }).toThrow(TypeError);
    expect(() => (hit.json as { data: unknown[] }).data.reverse()).toThrow(TypeError);
    expect(JSON.stringify(hit.json)).toBe(text);
  });

  it('deepFreeze freezes nested objects and arrays in place and leaves primitives alone', () => {
    const value = { a: [{ b: { c: 1 } }], d: 'x' };
    expect(deepFreeze(value)).toBe(value);
    expect(Object.isFrozen(value.a)).toBe(true);
    expect(Object.isFrozen(value.a[0]?.b)).toBe(true);
    expect(deepFreeze(3)).toBe(3);
    expect(deepFreeze(null)).toBe(null);
  });
});

describe('what a request read (RequestReads), for kept results', () => {
  const ENVELOPE = JSON.stringify({ code: 'ok', message: 'ok', data: [] });
  const ok = (): UpstreamResponse => ({ status: 200, text: ENVELOPE, json: JSON.parse(ENVELOPE) });
  const notFound: UpstreamResponse = { status: 404, text: '{}', json: {} };
  const served = () => new RequestReads();
  let now = 0;
  const cacheOf = (ttlMs: number, maxBytes = 1_000_000) =>
    new ResponseCache({ ttlMs, maxBytes, now: () => now, staggerJoiners: () => false });

  it('is cached until the first of its answers leaves the cache: a miss, a hit, a coalesced wait', async () => {
    now = 1_000;
    const cache = cacheOf(1_000);
    const first = served();
    await cache.get('scope', '/wallets', async () => ok(), first);
    expect(first.currentUntil).toBe(2_000);
    now = 1_400;
    const second = served();
    await cache.get('scope', '/wallets', async () => ok(), second); // a hit, cached at 1,000
    let answer: (response: UpstreamResponse) => void = () => {};
    const slow = new Promise<UpstreamResponse>((resolve) => {
      answer = resolve;
    });
    const originator = cache.get('scope', '/deposits', () => slow, second);
    const joiner = served();
    const joined = cache.get('scope', '/deposits', async () => ok(), joiner);
    now = 1_500;
    answer(ok());
    await Promise.all([originator, joined]);
    expect({ fromCache: second.fromCache, currentUntil: second.currentUntil }).toEqual({
      fromCache: 1,
      currentUntil: 2_000,
    });
    expect({ joined: joiner.joined, currentUntil: joiner.currentUntil }).toEqual({
      joined: 1,
      currentUntil: 2_500,
    });
  });

  it('is not cached at all once it read an answer the cache does not keep, or with the TTL at 0', async () => {
    const cache = cacheOf(1_000);
    const read = served();
    await cache.get('scope', '/wallets', async () => ok(), read);
    await cache.get('scope', '/wallets/x', async () => notFound, read);
    expect(read.currentUntil).toBe(Number.NEGATIVE_INFINITY);
    const off = served();
    await cacheOf(0).get('scope', '/wallets', async () => ok(), off);
    expect(off.currentUntil).toBe(Number.NEGATIVE_INFINITY);
  });
});
