import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ENTRY_BYTES_PER_CHAR, ENTRY_OVERHEAD_BYTES } from '../../../src/upstream/reads.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { EXTERNAL_TRON_ADDRESS } from '../../support/sandbox.ts';

let now = 1_000_000;
let gw: TestGateway;
let acme: { id: string; key: string };
let globex: { id: string; key: string };
let acmeWallet: string;

const WALLETS =
  '{ wallets(first: 5) { nodes { restId asset(currencyCode: "USDT") { balance { availableAmount lockedAmount } } } } }';
type Wallets = {
  wallets: {
    nodes: { restId: string; asset: { balance: { availableAmount: string; lockedAmount: string } } }[];
  };
};

beforeAll(async () => {
  gw = await startTestGateway({
    upstream: { cacheTtlMs: 1_000, cacheMaxBytes: 1024 * 1024 },
    clock: () => now,
  });
  acme = await gw.sandbox.world.merchant();
  globex = await gw.sandbox.world.merchant();
  acmeWallet = (await gw.sandbox.world.wallet(acme.id, { USDT: '100', TRX: '1' })).id;
  await gw.sandbox.world.wallet(globex.id, { USDT: '200', TRX: '1' });
});
beforeEach(() => {
  now += 60_000;
  gw.resetCalls();
});
afterAll(() => gw.close());

describe('per-merchant micro-cache', () => {
  it('serves a repeated GET from memory within the TTL, and refetches after it', async () => {
    await gw.request(WALLETS, {}, { key: acme.key });
    await gw.request(WALLETS, {}, { key: acme.key });
    expect(gw.upstreamCalls()).toHaveLength(1);
    now += 999;
    await gw.request(WALLETS, {}, { key: acme.key });
    expect(gw.upstreamCalls()).toHaveLength(1);
    now += 2;
    await gw.request(WALLETS, {}, { key: acme.key });
    expect(gw.upstreamCalls()).toHaveLength(2);
  });

  it('never serves an entry to another key, under concurrent load from two merchants', async () => {
    const results = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const who = i % 2 ? globex : acme;
        const { body } = await gw.request(WALLETS, {}, { key: who.key });
        return { who, data: body.data as Wallets };
      }),
    );
    for (const { who, data } of results) {
      const expected = who === acme ? '100.0000000000000000' : '200.0000000000000000';
      expect(data.wallets.nodes.map((w) => w.asset.balance.availableAmount)).toEqual([expected]);
    }
    // One call per merchant: everything else was coalesced or cached, never shared across keys.
    expect(gw.sandbox.sandbox.requests.map((r) => r.merchantId).sort()).toEqual([acme.id, globex.id].sort());
  });

  it('is invalidated for the caller by a successful createWithdrawalIntent', async () => {
    await gw.request(WALLETS, {}, { key: acme.key });
    const { body } = await gw.request(
      `mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename } }`,
      {
        input: {
          walletId: acmeWallet,
          serviceFeeMode: 'EXCLUSIVE',
          currencyCode: 'USDT',
          amount: '9.00',
          destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS },
        },
      },
      { key: acme.key },
    );
    expect(body.data).toEqual({ createWithdrawalIntent: { __typename: 'CreateWithdrawalIntentSuccess' } });
    const after = await gw.request(WALLETS, {}, { key: acme.key });
    expect((after.body.data as Wallets).wallets.nodes[0]?.asset.balance).toEqual({
      availableAmount: '90.0000000000000000',
      lockedAmount: '10.0000000000000000',
    });
    expect(gw.upstreamCalls()).toEqual([
      'GET /external/v1/wallets?page=1&size=5',
      'POST /external/v1/withdrawal-intents',
      'GET /external/v1/wallets?page=1&size=5',
    ]);
  });

  it('caches only successful answers', async () => {
    await gw.sandbox.admin('POST', '/faults', {
      method: 'GET',
      path: '/external/v1/deposits',
      status: 500,
      times: 1,
    });
    const failed = await gw.request('{ deposits(first: 1) { totalCount } }', {}, { key: acme.key });
    expect(failed.body.errors?.[0]?.extensions.code).toBe('UPSTREAM_ERROR');
    const healed = await gw.request('{ deposits(first: 1) { totalCount } }', {}, { key: acme.key });
    expect(healed.body.errors).toBeUndefined();
    expect(gw.upstreamCalls()).toHaveLength(2);
  });
});

describe('byte bound', () => {
  it('evicts the least recently used entries beyond the bound', async () => {
    const small = await startTestGateway({
      // Room for two ~1 KB bodies, each counted with its parsed objects, key and overhead.
      upstream: {
        cacheTtlMs: 60_000,
        cacheMaxBytes: 2_500 * ENTRY_BYTES_PER_CHAR + 2 * (ENTRY_OVERHEAD_BYTES + 200),
      },
      // Every read executes, so the REST answers' recency is what the reads make it; and with
      // query deduplication off, the REST answers hold the whole bound (runtime.ts).
      config: { queryDeduplication: false },
      clock: () => now,
    });
    try {
      const merchant = await small.sandbox.world.merchant();
      await small.sandbox.world.wallet(merchant.id);
      const read = (size: number) =>
        small.request(`{ wallets(first: ${size}) { totalCount } }`, {}, { key: merchant.key });
      await read(1); // ~1 KB body
      await read(2); // ~1 KB body: both fit
      await read(1);
      expect(small.upstreamCalls()).toHaveLength(2);
      await read(3); // a third ~1 KB body pushes out the least recently used (size 2)
      await read(1);
      await read(2);
      expect(small.upstreamCalls()).toEqual([
        'GET /external/v1/wallets?page=1&size=1',
        'GET /external/v1/wallets?page=1&size=2',
        'GET /external/v1/wallets?page=1&size=3',
        'GET /external/v1/wallets?page=1&size=2',
      ]);
    } finally {
      await small.close();
    }
  });
});

describe('coalescing', () => {
  it('makes one upstream call for N concurrent identical queries, even with the cache off', async () => {
    const uncached = await startTestGateway({ upstream: { cacheTtlMs: 0 } });
    try {
      const merchant = await uncached.sandbox.world.merchant();
      await uncached.sandbox.world.wallet(merchant.id);
      // The one call is held long enough for all 25 to join it, however slowly they arrive.
      await uncached.sandbox.admin('POST', '/faults', {
        path: '/external/v1/wallets',
        latencyMs: 1_500,
        times: 1,
      });
      const results = await Promise.all(
        Array.from({ length: 25 }, () =>
          uncached.request('{ wallets(first: 5) { totalCount } }', {}, { key: merchant.key }),
        ),
      );
      for (const { body } of results) expect(body).toEqual({ data: { wallets: { totalCount: 1 } } });
      expect(uncached.upstreamCalls()).toEqual(['GET /external/v1/wallets?page=1&size=5']);
      // Once settled, nothing is kept: the next query calls again.
      await uncached.request('{ wallets(first: 5) { totalCount } }', {}, { key: merchant.key });
      expect(uncached.upstreamCalls()).toHaveLength(2);
    } finally {
      await uncached.close();
    }
  });
});
