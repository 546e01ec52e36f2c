import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { KeptResults } from '../../../src/plugins/kept-results.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { EXTERNAL_TRON_ADDRESS, WITHDRAW, withdrawalBody, withdrawalInput } from '../../support/sandbox.ts';

// The upstream client coalesces identical REST calls in flight whatever this plugin does, so the
// number of upstream calls cannot tell whether a query was executed or shared: the number of
// executions can. Every execution of these queries asks the client for the wallet list once.

const WALLETS =
  '{ wallets(first: 5) { nodes { restId asset(currencyCode: "USDT") { balance { availableAmount lockedAmount } } } } }';
type Wallets = {
  wallets: {
    nodes: { restId: string; asset: { balance: { availableAmount: string; lockedAmount: string } } }[];
  };
};

let gw: TestGateway;
let listWallets: ReturnType<typeof vi.spyOn>;

beforeAll(async () => {
  gw = await startTestGateway();
});
beforeEach(() => {
  gw.resetCalls();
  listWallets = vi.spyOn(gw.client, 'listWallets');
});
afterEach(async () => {
  listWallets.mockRestore();
  await gw.sandbox.admin('DELETE', '/faults');
});
afterAll(() => gw.close());

async function merchant(usdt = '100') {
  const m = await gw.sandbox.world.merchant();
  const wallet = await gw.sandbox.world.wallet(m.id, { USDT: usdt, TRX: '1' });
  return { ...m, walletId: wallet.id };
}

/**
 * Holds the next wallet-list answer for `ms`, so that requests sent meanwhile overlap: a second
 * by default, far longer than a busy machine takes to send them all.
 */
function slowWalletList(ms = 1_000, extra: Record<string, unknown> = {}) {
  return gw.sandbox.admin('POST', '/faults', {
    method: 'GET',
    path: '/external/v1/wallets',
    latencyMs: ms,
    times: 1,
    ...extra,
  });
}

describe('query deduplication', () => {
  it('answers identical concurrent queries of one key with one execution', async () => {
    const acme = await merchant('100');
    await slowWalletList();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => gw.request(WALLETS, {}, { key: acme.key })),
    );
    const expected = {
      data: {
        wallets: {
          nodes: [
            {
              restId: acme.walletId,
              asset: {
                balance: { availableAmount: '100.0000000000000000', lockedAmount: '0.0000000000000000' },
              },
            },
          ],
        },
      },
    };
    for (const { status, body } of responses) {
      expect(status).toBe(200);
      expect(body).toEqual(expected);
    }
    expect(listWallets).toHaveBeenCalledTimes(1);
    expect(gw.upstreamCalls()).toEqual(['GET /external/v1/wallets?page=1&size=5']);

    // With the micro-cache off (this gateway), nothing is kept once the execution is over: the
    // next query executes again. Kept results: below.
    await gw.request(WALLETS, {}, { key: acme.key });
    expect(listWallets).toHaveBeenCalledTimes(2);
  });

  it('executes every request when turned off', async () => {
    const off = await startTestGateway({ config: { queryDeduplication: false } });
    const spy = vi.spyOn(off.client, 'listWallets');
    try {
      const m = await off.sandbox.world.merchant();
      await off.sandbox.world.wallet(m.id);
      await off.sandbox.admin('POST', '/faults', {
        path: '/external/v1/wallets',
        latencyMs: 1_000,
        times: 1,
      });
      await Promise.all(Array.from({ length: 10 }, () => off.request(WALLETS, {}, { key: m.key })));
      expect(spy).toHaveBeenCalledTimes(10);
      // Their REST calls are still coalesced below.
      expect(off.upstreamCalls()).toHaveLength(1);
    } finally {
      await off.close();
    }
  });

  it('never shares a result across keys', async () => {
    const acme = await merchant('100');
    const globex = await merchant('200');
    await slowWalletList();
    const responses = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const who = i % 2 ? globex : acme;
        const { body } = await gw.request(WALLETS, {}, { key: who.key });
        return { who, data: body.data as Wallets };
      }),
    );
    for (const { who, data } of responses) {
      expect(data.wallets.nodes.map((w) => w.restId)).toEqual([who.walletId]);
    }
    expect(listWallets).toHaveBeenCalledTimes(2);
  });

  it('shares only between the same operation and variables', async () => {
    const acme = await merchant();
    await gw.sandbox.world.wallet(acme.id);
    await slowWalletList();
    const query = 'query Wallets($first: Int) { wallets(first: $first) { nodes { restId } } }';
    const [one, two, again] = await Promise.all([
      gw.request(query, { first: 1 }, { key: acme.key }),
      gw.request(query, { first: 2 }, { key: acme.key }),
      gw.request(query, { first: 1 }, { key: acme.key }),
    ]);
    expect((one.body.data as Wallets).wallets.nodes).toHaveLength(1);
    expect((two.body.data as Wallets).wallets.nodes).toHaveLength(2);
    expect(again.body).toEqual(one.body);
    expect(listWallets).toHaveBeenCalledTimes(2);
  });

  it('never shares a mutation', async () => {
    const acme = await merchant('100');
    const mutation = `mutation($input: CreateWithdrawalIntentInput!) {
      createWithdrawalIntent(input: $input) { ... on CreateWithdrawalIntentSuccess { withdrawalIntent { id } } }
    }`;
    const input = {
      walletId: acme.walletId,
      serviceFeeMode: 'EXCLUSIVE',
      currencyCode: 'USDT',
      amount: '5.00',
      destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS },
    };
    // The first held long enough for the second to be sent meanwhile: they overlap.
    await gw.sandbox.admin('POST', '/faults', {
      method: 'POST',
      path: '/external/v1/withdrawal-intents',
      latencyMs: 1_000,
      times: 1,
    });
    const [a, b] = await Promise.all([
      gw.request(mutation, { input }, { key: acme.key }),
      gw.request(mutation, { input }, { key: acme.key }),
    ]);
    type Created = { createWithdrawalIntent: { withdrawalIntent: { id: string } } };
    const ids = [a, b].map((r) => (r.body.data as Created).createWithdrawalIntent.withdrawalIntent.id);
    expect(new Set(ids).size).toBe(2);
    expect(gw.upstreamCalls().filter((c) => c.startsWith('POST'))).toHaveLength(2);
  });

  it('does not let a query that starts after a withdrawal join one that started before it', async () => {
    const acme = await merchant('100');
    // Held while the withdrawal and the query after it run, so that the latter could join it.
    await slowWalletList(2_000);
    const before = gw.request(WALLETS, {}, { key: acme.key });
    // Let the first query reach the REST API before the withdrawal is created.
    await vi.waitFor(() => expect(gw.upstreamCalls()).toContain('GET /external/v1/wallets?page=1&size=5'), {
      timeout: 20_000,
    });
    const created = await gw.request(
      `mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename } }`,
      {
        input: {
          walletId: acme.walletId,
          serviceFeeMode: 'EXCLUSIVE',
          currencyCode: 'USDT',
          amount: '9.00',
          destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS },
        },
      },
      { key: acme.key },
    );
    expect(created.body.data).toEqual({
      createWithdrawalIntent: { __typename: 'CreateWithdrawalIntentSuccess' },
    });
    const after = await gw.request(WALLETS, {}, { key: acme.key });
    expect((after.body.data as Wallets).wallets.nodes[0]?.asset.balance).toEqual({
      availableAmount: '90.0000000000000000',
      lockedAmount: '10.0000000000000000',
    });
    expect((await before).body.errors).toBeUndefined();
    expect(listWallets).toHaveBeenCalledTimes(2);
  });

  it('does not share a failed result: each waiting request executes on its own', async () => {
    const acme = await merchant('100');
    await slowWalletList(1_000, { status: 500 });
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => gw.request(WALLETS, {}, { key: acme.key })),
    );
    const failed = responses.filter((r) => r.body.errors);
    expect(failed).toHaveLength(1);
    expect(failed[0]?.body.errors?.[0]?.extensions.code).toBe('UPSTREAM_ERROR');
    for (const r of responses.filter((r) => !r.body.errors)) {
      expect((r.body.data as Wallets).wallets.nodes.map((w) => w.restId)).toEqual([acme.walletId]);
    }
    // The failed first execution, then the five waiting ones (their REST calls coalesced into one).
    expect(listWallets).toHaveBeenCalledTimes(6);
    expect(gw.upstreamCalls()).toHaveLength(2);
  });
});

describe('kept results (micro-cache on)', () => {
  // The micro-cache's TTL is 1 s on this gateway's own clock; each test starts a minute later, so
  // nothing cached by one test is seen by the next.
  let now = 1_000_000;
  let kept: TestGateway;
  let spies: Record<'listWallets' | 'listDeposits' | 'getWallet', ReturnType<typeof vi.spyOn>>;

  beforeAll(async () => {
    kept = await startTestGateway({
      upstream: { cacheTtlMs: 1_000, cacheMaxBytes: 1024 * 1024 },
      clock: () => now,
    });
  });
  beforeEach(() => {
    now += 60_000;
    kept.resetCalls();
    spies = {
      listWallets: vi.spyOn(kept.client, 'listWallets'),
      listDeposits: vi.spyOn(kept.client, 'listDeposits'),
      getWallet: vi.spyOn(kept.client, 'getWallet'),
    };
  });
  afterEach(() => {
    for (const spy of Object.values(spies)) spy.mockRestore();
  });
  afterAll(() => kept.close());

  async function keptMerchant(usdt = '100') {
    const m = await kept.sandbox.world.merchant();
    const wallet = await kept.sandbox.world.wallet(m.id, { USDT: usdt, TRX: '1' });
    return { ...m, walletId: wallet.id };
  }
  const balanceOf = (body: { data?: unknown }) =>
    (body.data as Wallets).wallets.nodes[0]?.asset.balance.availableAmount;

  it('answers the same query with the kept result while its REST answers are cached, as they would', async () => {
    const acme = await keptMerchant('100');
    const keeps = vi.spyOn(KeptResults.prototype, 'keep');
    const first = await kept.request(WALLETS, {}, { key: acme.key });
    // What every later request receives is frozen all the way down: none can change another's.
    const call = keeps.mock.calls[0];
    keeps.mockRestore();
    if (!call) throw new Error('the first execution was not offered to be kept');
    const keptData = (call[2].result as { data: Wallets }).data;
    expect(Object.isFrozen(keptData.wallets.nodes[0]?.asset.balance)).toBe(true);
    // Another writer moves money straight on the REST API: nothing here can know before the TTL.
    const direct = await kept.sandbox.call('POST', '/external/v1/withdrawal-intents', {
      key: acme.key,
      body: withdrawalBody(acme.walletId),
    });
    expect(direct.status).toBe(201);
    now += 999;
    const again = await kept.request(WALLETS, {}, { key: acme.key });
    expect(again.body).toEqual(first.body);
    expect(balanceOf(again.body)).toBe('100.0000000000000000');
    expect(spies.listWallets).toHaveBeenCalledTimes(1);
    // The micro-cache alone answers the same within the TTL: another query over the same read.
    const other = await kept.request(
      '{ wallets(first: 5) { nodes { asset(currencyCode: "USDT") { balance { availableAmount } } } } }',
      {},
      { key: acme.key },
    );
    expect(other.body.data).toMatchObject({
      wallets: { nodes: [{ asset: { balance: { availableAmount: '100.0000000000000000' } } }] },
    });
    const reads = () => kept.upstreamCalls().filter((call) => call.startsWith('GET'));
    expect(reads()).toEqual(['GET /external/v1/wallets?page=1&size=5']);

    // Once the wallet list has left the micro-cache, the query executes and reads it again.
    now += 2;
    const after = await kept.request(WALLETS, {}, { key: acme.key });
    expect(balanceOf(after.body)).toBe('89.0000000000000000');
    expect(spies.listWallets).toHaveBeenCalledTimes(3);
    expect(reads()).toHaveLength(2);
  });

  it('keeps a result only until the first of its REST answers leaves the micro-cache', async () => {
    const acme = await keptMerchant();
    const both = `{ wallets(first: 5) { nodes { restId } } deposits(first: 1) { totalCount } }`;
    await kept.request(WALLETS, {}, { key: acme.key }); // the wallet list is cached until +1000
    now += 500;
    await kept.request(both, {}, { key: acme.key }); // deposits cached until +1500; kept until +1000
    expect(spies.listDeposits).toHaveBeenCalledTimes(1);
    now += 499;
    await kept.request(both, {}, { key: acme.key });
    expect(spies.listDeposits).toHaveBeenCalledTimes(1);
    now += 2;
    const again = await kept.request(both, {}, { key: acme.key });
    expect(again.body.errors).toBeUndefined();
    expect(spies.listDeposits).toHaveBeenCalledTimes(2);
    // Executed again: the wallet list from the REST API, the deposits still from the micro-cache.
    expect(kept.upstreamCalls()).toEqual([
      'GET /external/v1/wallets?page=1&size=5',
      'GET /external/v1/deposits?page=1&size=1',
      'GET /external/v1/wallets?page=1&size=5',
    ]);
  });

  it('never keeps a result that read an answer the micro-cache does not keep (a 404)', async () => {
    const acme = await keptMerchant();
    const missing = `{ wallet(id: "${crypto.randomUUID()}") { restId } }`;
    for (let i = 0; i < 2; i++) {
      const { body } = await kept.request(missing, {}, { key: acme.key });
      expect(body).toEqual({ data: { wallet: null } });
    }
    expect(spies.getWallet).toHaveBeenCalledTimes(2);
    expect(kept.upstreamCalls()).toHaveLength(2);
  });

  it("forgets a caller's kept results when it creates a withdrawal, and only that caller's", async () => {
    const acme = await keptMerchant('100');
    const globex = await keptMerchant('200');
    await kept.request(WALLETS, {}, { key: acme.key });
    await kept.request(WALLETS, {}, { key: globex.key });
    const created = await kept.request(
      WITHDRAW,
      { input: withdrawalInput(acme.walletId, { amount: '9.00' }) },
      { key: acme.key },
    );
    expect(created.body.data).toEqual({
      createWithdrawalIntent: { __typename: 'CreateWithdrawalIntentSuccess' },
    });
    const acmeAfter = await kept.request(WALLETS, {}, { key: acme.key });
    expect((acmeAfter.body.data as Wallets).wallets.nodes[0]?.asset.balance).toEqual({
      availableAmount: '90.0000000000000000',
      lockedAmount: '10.0000000000000000',
    });
    const globexAfter = await kept.request(WALLETS, {}, { key: globex.key });
    expect(balanceOf(globexAfter.body)).toBe('200.0000000000000000');
    // acme: executed twice; globex: once, then its kept result.
    expect(spies.listWallets).toHaveBeenCalledTimes(3);
  });

  it('keys kept results by the variables the operation declares, and keeps none for a number JSON cannot write', async () => {
    const acme = await keptMerchant();
    const query = 'query Q($first: Int) { wallets(first: $first) { nodes { restId } } }';
    const send = async (variables: string) => {
      const response = await kept.gateway.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${acme.key}` },
        body: `{"query":${JSON.stringify(query)},"variables":${variables}}`,
      });
      return { status: response.status, body: await response.json() };
    };
    // Variables it does not declare change nothing graphql-js answers: one execution, one kept result.
    const padded = await send(`{"first":null,"pad":"${'a'.repeat(10_000)}"}`);
    const other = await send('{"first":null,"pad":"b"}');
    expect(other.body).toEqual(padded.body);
    expect(spies.listWallets).toHaveBeenCalledTimes(1);
    // 1e400 arrives as -Infinity, which JSON.stringify writes as null: never the kept null's answer.
    const overflow = await send('{"first":-1e400}');
    expect(overflow.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(overflow.body.data).toBeUndefined();
  });

  it('forgets kept results after a withdrawal with an unknown outcome, and after its retry finds it', async () => {
    const lossy = await startTestGateway({
      upstream: { cacheTtlMs: 60_000 },
      config: { reconcile: { clockAllowanceMs: 100, lateCommitMs: 100 } },
    });
    lossy.sandbox.sandbox.idempotencyExtension = false;
    try {
      const m = await lossy.sandbox.world.merchant();
      const wallet = await lossy.sandbox.world.wallet(m.id, { USDT: '100', TRX: '1' });
      const read = async () => balanceOf((await lossy.request(WALLETS, {}, { key: m.key })).body);
      expect(await read()).toBe('100.0000000000000000');
      // The REST API creates the intent, and the connection is cut before its answer.
      await lossy.sandbox.admin('POST', '/faults', {
        method: 'POST',
        path: '/external/v1/withdrawal-intents',
        times: 1,
        resetAfterRoute: true,
      });
      const input = withdrawalInput(wallet.id, { amount: '9.00', idempotencyKey: 'lost-answer' });
      const lost = await lossy.request(WITHDRAW, { input }, { key: m.key });
      expect(lost.body.errors?.[0]?.extensions.code).toBe('OUTCOME_UNKNOWN');
      expect(await read()).toBe('90.0000000000000000');
      // Another writer moves money meanwhile: cached (and kept) reads cannot know.
      const direct = await lossy.sandbox.call('POST', '/external/v1/withdrawal-intents', {
        key: m.key,
        body: withdrawalBody(wallet.id, { amount: '4.00' }),
      });
      expect(direct.status).toBe(201);
      expect(await read()).toBe('90.0000000000000000');
      // The retry reconciles: it finds the intent the lost answer created. Money moved: forget.
      const retry = await lossy.request(WITHDRAW, { input }, { key: m.key });
      expect(retry.body.data).toEqual({
        createWithdrawalIntent: { __typename: 'CreateWithdrawalIntentSuccess' },
      });
      expect(await read()).toBe('85.0000000000000000');
    } finally {
      await lossy.close();
    }
  });

  it("never answers one key with another key's kept result, even of the same merchant", async () => {
    const acme = await keptMerchant('100');
    const readOnly = await kept.request(WALLETS, {}, { key: acme.readOnlyKey });
    const readWrite = await kept.request(WALLETS, {}, { key: acme.key });
    expect(readWrite.body).toEqual(readOnly.body);
    expect(spies.listWallets).toHaveBeenCalledTimes(2);
  });
});
