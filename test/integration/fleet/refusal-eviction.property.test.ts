import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, type RedisClient } from '../../../src/redis/connection.ts';
import {
  IDEMPOTENCY_TTL_MS,
  type IdempotencyRecord,
  type IdempotencyStore,
  type PendingRecord,
  StoreFullError,
} from '../../../src/withdrawals/idempotency-store.ts';
import { MemoryIdempotencyStore } from '../../../src/withdrawals/memory-idempotency-store.ts';
import { RedisIdempotencyStore } from '../../../src/withdrawals/redis-idempotency-store.ts';
import { previousReleaseCheckout } from '../../support/previous-release.ts';
import { type RunningRedis, startRedis } from '../../support/redis.ts';

/**
 * The idempotency store's bounds under random histories: claims that end refused, succeeded,
 * pending with an unknown outcome, still in flight (leased), or forgotten (a definite failure),
 * over three caller scopes at small bounds. Whatever the history:
 *
 * - a pending or succeeded record is never forgotten (it reads back as written);
 * - a new key is refused (StoreFullError) only when pending and succeeded records alone fill its
 *   scope's bound, or (in process) the store's; otherwise it is claimed, refusals making room;
 * - no bound is exceeded.
 *
 * Both stores; Redis is a real redis-server. Seeded (REFUSAL_EVICTION_SEED), 60 histories each.
 */

const PER_CALLER = 3;
const STORE_KEYS = 5;
const SCOPES = ['s1', 's2', 's3'] as const;
const KEYS = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5'] as const;
const RUNS = Number(process.env.REFUSAL_EVICTION_RUNS ?? 60);
const SEED = Number(process.env.REFUSAL_EVICTION_SEED ?? 20261126);
/** Long enough that a leased claim stays in flight for the whole history. */
const LEASE_MS = 60_000;

type End = 'refused' | 'succeeded' | 'unknown' | 'inFlight' | 'forgotten';
interface Step {
  scope: (typeof SCOPES)[number];
  key: (typeof KEYS)[number];
  end: End;
}

const stepArbitrary = fc.record({
  scope: fc.constantFrom(...SCOPES),
  key: fc.constantFrom(...KEYS),
  end: fc.constantFrom<End>('refused', 'refused', 'refused', 'succeeded', 'unknown', 'inFlight', 'forgotten'),
});

const fresh = (fingerprint: string): PendingRecord => ({ v: 1, state: 'pending', fingerprint, startedAt: 1 });

function ended(pending: PendingRecord, end: End): IdempotencyRecord | null {
  switch (end) {
    case 'refused':
      return { ...pending, state: 'refused', code: 'balance_insufficient', message: 'poor' };
    case 'succeeded':
      return {
        ...pending,
        state: 'succeeded',
        intent: { id: `intent-${pending.fingerprint}` } as never,
      };
    case 'unknown':
      return {
        ...pending,
        attempt: { v: 1, id: `a-${pending.fingerprint}`, owner: 'o', sentAt: 1, endsBy: 2, endedAt: 2 },
      };
    default:
      return null;
  }
}

/**
 * Runs `steps` against `store`, checking the properties after each. `storeBound`: the store-wide
 * bound, when the store has one.
 */
async function check(store: IdempotencyStore, steps: Step[], storeBound: number | null): Promise<void> {
  /** What the store must still hold: the records that cost money or are in flight. */
  const kept = new Map<string, { scope: string; key: string; record: IdempotencyRecord }>();
  /** Refusals the store may hold or may have forgotten. */
  const refused = new Map<string, { scope: string; key: string; record: IdempotencyRecord }>();
  const name = (scope: string, key: string) => `${scope}/${key}`;
  const keptIn = (scope: string) => [...kept.values()].filter((entry) => entry.scope === scope).length;
  let turn = 0;
  for (const { scope, key, end } of steps) {
    turn++;
    const pending = fresh(`${name(scope, key)}#${turn}`);
    const holder = `h${turn}`;
    const known = kept.get(name(scope, key)) ?? refused.get(name(scope, key));
    let held: Awaited<ReturnType<IdempotencyStore['claim']>>;
    try {
      held = await store.claim(scope, key, pending, LEASE_MS, holder);
    } catch (error) {
      expect(error).toBeInstanceOf(StoreFullError);
      // Refused only when what may never be forgotten fills the bound.
      const full = error as StoreFullError;
      if (full.scope === 'caller') expect(keptIn(scope)).toBeGreaterThanOrEqual(PER_CALLER);
      else expect(kept.size).toBeGreaterThanOrEqual(storeBound ?? Number.POSITIVE_INFINITY);
      expect(known === undefined || refused.has(name(scope, key))).toBe(true);
      refused.delete(name(scope, key));
      await verify();
      continue;
    }
    if (held) {
      // A key the store still holds answers its record.
      expect(known).toBeDefined();
      expect(held.record).toEqual(known?.record);
    } else {
      // Claimed anew: only a key never seen, or a refusal that was forgotten.
      expect(kept.has(name(scope, key))).toBe(false);
      refused.delete(name(scope, key));
      const record = ended(pending, end);
      if (end !== 'inFlight') expect(await store.settle(scope, key, holder, pending, record)).toBe(true);
      if (end === 'refused' && record) refused.set(name(scope, key), { scope, key, record });
      else if (end === 'inFlight') kept.set(name(scope, key), { scope, key, record: pending });
      else if (record) kept.set(name(scope, key), { scope, key, record });
    }
    await verify();
  }

  async function verify(): Promise<void> {
    for (const { scope, key, record } of kept.values()) {
      expect((await store.read(scope, key))?.record, `${scope}/${key} was forgotten`).toEqual(record);
    }
    const held = new Map<string, number>();
    for (const [at, { scope, key, record }] of refused) {
      const now = await store.read(scope, key);
      if (now === null) refused.delete(at);
      else {
        expect(now.record).toEqual(record);
        held.set(scope, (held.get(scope) ?? 0) + 1);
      }
    }
    for (const scope of SCOPES)
      expect(keptIn(scope) + (held.get(scope) ?? 0)).toBeLessThanOrEqual(PER_CALLER);
    if (storeBound !== null) expect(kept.size + refused.size).toBeLessThanOrEqual(storeBound);
  }
}

let redis: RunningRedis;
let connection: RedisClient;
beforeAll(async () => {
  redis = await startRedis();
  connection = await connectRedis(redis.url, pino({ level: 'silent' }));
});
afterAll(async () => {
  connection?.disconnect();
  await redis?.close();
});

const histories = fc.array(stepArbitrary, { minLength: 1, maxLength: 40 });

describe('refusals make room; pending and succeeded records never go', () => {
  it('in process: random histories at small bounds', async () => {
    await fc.assert(
      fc.asyncProperty(histories, async (steps) => {
        const store = new MemoryIdempotencyStore({ maxKeys: STORE_KEYS, maxKeysPerCaller: PER_CALLER });
        await check(store, steps, STORE_KEYS);
        expect(store.size).toBeLessThanOrEqual(STORE_KEYS);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it('in Redis: random histories at a small per-caller bound', async () => {
    await fc.assert(
      fc.asyncProperty(histories, async (steps) => {
        await connection.flushdb();
        await check(new RedisIdempotencyStore(connection, { maxKeysPerCaller: PER_CALLER }), steps, null);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});

describe('in process: one claim per key', () => {
  it('a claim at a scope whose records all expired is kept, and answers its retry', async () => {
    let now = 1_000;
    const store = new MemoryIdempotencyStore({ maxKeys: 10, maxKeysPerCaller: 2 }, () => now);
    for (const key of ['a', 'b']) {
      const pending = fresh(key);
      expect(await store.claim('s', key, pending, LEASE_MS, key)).toBeNull();
      await store.settle('s', key, key, pending, ended(pending, 'succeeded'));
    }
    now += IDEMPOTENCY_TTL_MS;
    const pending = fresh('c');
    expect(await store.claim('s', 'c', pending, LEASE_MS, 'c')).toBeNull();
    // The claim holds the key: a second claim finds it, in flight, rather than sending again.
    expect(await store.read('s', 'c')).toEqual({ record: pending, leased: true });
    expect(await store.claim('s', 'c', fresh('c'), LEASE_MS, 'other')).toEqual({
      record: pending,
      leased: true,
    });
    expect(store.size).toBe(1);
  });

  it('two claims of one key at once: one claims it, the other finds it in flight', async () => {
    const store = new MemoryIdempotencyStore({ maxKeys: 10, maxKeysPerCaller: 10 });
    const [first, second] = await Promise.all([
      store.claim('s', 'k', fresh('one'), LEASE_MS, 'one'),
      store.claim('s', 'k', fresh('two'), LEASE_MS, 'two'),
    ]);
    expect(first).toBeNull();
    expect(second).toEqual({ record: fresh('one'), leased: true });
    expect(store.size).toBe(1);
  });

  it('counts what it forgets, oldest refusal first, the caller its own', async () => {
    let evicted = 0;
    const store = new MemoryIdempotencyStore({
      maxKeys: 4,
      maxKeysPerCaller: 2,
      onEvicted: () => evicted++,
    });
    const refuse = async (scope: string, key: string) => {
      const pending = fresh(`${scope}/${key}`);
      expect(await store.claim(scope, key, pending, LEASE_MS, key)).toBeNull();
      await store.settle(scope, key, key, pending, ended(pending, 'refused'));
    };
    await refuse('a', '1');
    await refuse('b', '1');
    await refuse('a', '2');
    await refuse('b', '2');
    // The store is full: the oldest refusal of all (a/1) goes.
    await refuse('c', '1');
    expect(await store.read('a', '1')).toBeNull();
    expect(evicted).toBe(1);
    // b is at its own bound: b's oldest (b/1) goes, not a's.
    await refuse('b', '3');
    expect(await store.read('b', '1')).toBeNull();
    expect(await store.read('a', '2')).not.toBeNull();
    expect(evicted).toBe(2);
    expect(store.size).toBe(4);
    expect(store.refusedSize).toBe(4);
  });
});

describe('in Redis, beside the previous release', () => {
  type StoreModule = { RedisIdempotencyStore: typeof RedisIdempotencyStore };
  let previous: IdempotencyStore;
  let current: RedisIdempotencyStore;
  beforeAll(async () => {
    const checkout = previousReleaseCheckout();
    const module = (await import(`${checkout}/src/withdrawals/redis-idempotency-store.ts`)) as StoreModule;
    previous = new module.RedisIdempotencyStore(connection, { maxKeysPerCaller: 2 });
    current = new RedisIdempotencyStore(connection, { maxKeysPerCaller: 2 });
  }, 240_000);

  const refuse = async (store: IdempotencyStore, scope: string, key: string) => {
    const pending = fresh(`${scope}/${key}`);
    expect(await store.claim(scope, key, pending, LEASE_MS, key)).toBeNull();
    expect(await store.settle(scope, key, key, pending, ended(pending, 'refused'))).toBe(true);
  };

  it("the previous release's refusals are kept (it does not name them); this release's make room", async () => {
    await connection.flushdb();
    await refuse(previous, 'old', '1');
    await refuse(previous, 'old', '2');
    await expect(current.claim('old', '3', fresh('3'), LEASE_MS, '3')).rejects.toBeInstanceOf(StoreFullError);
    await refuse(current, 'new', '1');
    await refuse(current, 'new', '2');
    // Either release then finds the room: this one by forgetting its oldest refusal.
    expect(await current.claim('new', '3', fresh('3'), LEASE_MS, '3')).toBeNull();
    expect(await current.read('new', '1')).toBeNull();
    expect(await previous.read('new', '2')).not.toBeNull();
    // The previous release reads the index as it always did: the scope is at its bound.
    // (Its own StoreFullError class, so by name.)
    await expect(previous.claim('new', '4', fresh('4'), LEASE_MS, '4')).rejects.toMatchObject({
      name: 'StoreFullError',
    });
  });

  it('a refusal that expired and was claimed again by the previous release is not forgotten', async () => {
    await connection.flushdb();
    await refuse(current, 's', '1');
    // Its record expires (as 24 h later); the previous release claims the key again, in flight.
    const [name] = await connection.keys('mwg:{s}:idem:1');
    await connection.del(name as string);
    const pending = fresh('again');
    expect(await previous.claim('s', '1', pending, LEASE_MS, 'old-holder')).toBeNull();
    await refuse(current, 's', '2');
    // At the bound: the only refusal to forget is s/2; s/1 is pending and stays.
    expect(await current.claim('s', '3', fresh('3'), LEASE_MS, '3')).toBeNull();
    expect(await current.read('s', '1')).toEqual({ record: pending, leased: true });
    expect(await current.read('s', '2')).toBeNull();
    await expect(current.claim('s', '4', fresh('4'), LEASE_MS, '4')).rejects.toBeInstanceOf(StoreFullError);
  });
});
