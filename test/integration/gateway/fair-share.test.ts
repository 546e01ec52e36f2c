import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayError } from '../../../src/errors/errors.ts';
import { WALKS_PER_KEY } from '../../../src/plugins/cost-limit.ts';
import { DEMO_KEYS, seedWorld } from '../../../src/sandbox/seed.ts';
import { FREE_CALLS_PER_REQUEST } from '../../../src/upstream/fair-share.ts';
import { CALLS_PER_KEY } from '../../../src/upstream/transport.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';

/**
 * Each key's share of the REST API (src/upstream/fair-share.ts): a request's first
 * FREE_CALLS_PER_REQUEST calls go at once; past those, CALLS_PER_KEY calls of one key in flight at
 * once, its further
 * calls waiting in its own queue, unsent, while other keys' calls go at once. The sandbox holds
 * one key's calls (a latency fault on deposits) so that its share stays taken while the test
 * looks; counts, not times, are asserted.
 */

/**
 * How long the sandbox holds the calls that take a key's share: far longer than the test takes to
 * look, however busy the machine. Only those calls are held (`times`), so later ones answer at once.
 */
const HOLD_MS = 5_000;
const holdDeposits = (times: number, latencyMs = HOLD_MS, path = '/external/v1/deposits') =>
  gw.sandbox.admin('POST', '/faults', { method: 'GET', path, latencyMs, times });

/** Calls one request can have in flight before any waits: its free calls, then its key's share. */
const AT_ONCE = FREE_CALLS_PER_REQUEST + CALLS_PER_KEY;

let gw: TestGateway;
/** Calls that had to wait for their key's share, by scope. */
const queued = new Map<string, number>();
let busy: { id: string; key: string };
let other: { id: string; key: string };

beforeAll(async () => {
  gw = await startTestGateway({
    upstream: {
      fairShare: { onQueued: (scope: string) => queued.set(scope, (queued.get(scope) ?? 0) + 1) },
    },
  });
  busy = await gw.sandbox.world.merchant();
  other = await gw.sandbox.world.merchant();
  for (const { id } of [busy, other]) {
    const wallet = await gw.sandbox.world.wallet(id);
    await gw.sandbox.world.deposit(wallet.id, { amount: '5' });
  }
  // Keys the REST API has accepted: an unknown key's calls wait for its first answer (client.ts).
  for (const { key } of [busy, other]) await gw.request('{ wallets(first: 1) { totalCount } }', {}, { key });
});
beforeEach(async () => {
  queued.clear();
  await gw.sandbox.admin('DELETE', '/faults');
  gw.resetCalls();
});
afterAll(() => gw.close());

const depositCalls = () => gw.upstreamCalls().filter((call) => call.startsWith('GET /external/v1/deposits'));
const scopeOf = (key: string) => gw.client.scopeOf(`Bearer ${key}`);

/** One request with `n` different REST reads, all at once: deposits by made-up ids (each null). */
function manyReads(n: number): string {
  const id = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  return `{ ${Array.from({ length: n }, (_, i) => `d${i}: deposit(id: "${id(i)}") { id }`).join(' ')} }`;
}

describe("each key's share of the REST API", () => {
  it("queues one key's calls past its share, unsent, while another key's call goes at once", async () => {
    await holdDeposits(AT_ONCE);
    const extra = 2;
    const expensive = gw.request(manyReads(AT_ONCE + extra), {}, { key: busy.key });
    // The busy key holds its whole share; its other calls wait in its queue.
    await expect.poll(() => depositCalls().length).toBe(AT_ONCE);
    await expect.poll(() => queued.get(scopeOf(busy.key))).toBe(extra);

    const quick = await gw.request('{ wallets(first: 1) { totalCount } }', {}, { key: other.key });
    expect(quick.body).toEqual({ data: { wallets: { totalCount: 1 } } });
    expect(queued.has(scopeOf(other.key))).toBe(false);
    // Answered while the busy key's queued calls were still unsent.
    expect(depositCalls()).toHaveLength(AT_ONCE);

    // Each queued call goes when a slot of its own key is free: all answered, none twice.
    const answer = await expensive;
    expect(answer.body.errors).toBeUndefined();
    expect(Object.values(answer.body.data ?? {})).toEqual(
      Array.from({ length: AT_ONCE + extra }, () => null),
    );
    expect(depositCalls()).toHaveLength(AT_ONCE + extra);
    expect(gw.client.activity()).toMatchObject({ calls: 0, timers: 0 });
  });

  it("counts a large page against its key's share wherever it comes in its request", async () => {
    await holdDeposits(CALLS_PER_KEY);
    // Each request's only call, a window of 1000 deposits: not free, though it is its first.
    const windows = Array.from({ length: CALLS_PER_KEY + 1 }, (_, i) =>
      gw.request(`{ deposits(first: ${1000 - i}) { nodes { id } } }`, {}, { key: busy.key }),
    );
    await expect.poll(() => queued.get(scopeOf(busy.key))).toBe(1);
    expect(depositCalls()).toHaveLength(CALLS_PER_KEY);
    // A small window of another key goes at once.
    const small = await gw.request('{ deposits(first: 5) { nodes { id } } }', {}, { key: other.key });
    expect(small.body.errors).toBeUndefined();
    expect(queued.has(scopeOf(other.key))).toBe(false);
    for (const answer of await Promise.all(windows)) expect(answer.body.errors).toBeUndefined();
    expect(depositCalls()).toHaveLength(CALLS_PER_KEY + 2);
  });

  it('fails a queued call whose deadline passes with the deadline error, and never sends it', async () => {
    // Held far longer than the queued call's deadline below, so that no slot is free before it.
    await holdDeposits(AT_ONCE, 6_000);
    const authorization = `Bearer ${busy.key}`;
    // The share taken by the calls of a request with time to spare…
    const holder = gw.client.caller(authorization, { deadline: Date.now() + 20_000 });
    const held = Array.from({ length: AT_ONCE }, (_, i) =>
      gw.client.listDeposits(holder, { page: 1, size: i + 1 }),
    );
    await expect.poll(() => depositCalls().length).toBe(AT_ONCE);
    // …and another request of the same key, past its free calls, whose deadline comes first.
    const late = gw.client.caller(authorization, { deadline: Date.now() + 2_000 });
    for (let i = 0; i < FREE_CALLS_PER_REQUEST; i++)
      await gw.client.listWallets(late, { page: 1, size: i + 1 });
    const error = (await gw.client.listDeposits(late, { page: 1, size: 50 }).catch((e) => e)) as GatewayError;
    expect(error.code).toBe('UPSTREAM_TIMEOUT');
    expect(queued.get(scopeOf(busy.key))).toBe(1);
    // Dropped from the queue at its deadline, before any slot was free: never sent, never spent.
    expect(depositCalls()).toHaveLength(AT_ONCE);
    expect(late.calls.made).toBe(FREE_CALLS_PER_REQUEST);
    await Promise.all(held);
    expect(depositCalls()).toHaveLength(AT_ONCE);
  });

  it('lets a POST go at once, whatever its key has in flight', async () => {
    const merchant = await gw.sandbox.world.merchant();
    const wallet = await gw.sandbox.world.wallet(merchant.id, { USDT: '1000' });
    await gw.request('{ wallets(first: 1) { totalCount } }', {}, { key: merchant.key });
    await holdDeposits(AT_ONCE);
    const reads = gw.request(manyReads(AT_ONCE + 1), {}, { key: merchant.key });
    await expect.poll(() => queued.get(scopeOf(merchant.key))).toBe(1);
    const created = await gw.request(
      `mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename } }`,
      {
        input: {
          walletId: wallet.id,
          serviceFeeMode: 'EXCLUSIVE',
          currencyCode: 'USDT',
          amount: '1',
          destination: { type: 'crypto', rail: 'tron', identifier: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7' },
        },
      },
      { key: merchant.key },
    );
    expect(created.body.errors).toBeUndefined();
    // Sent while the key's reads were still queued.
    expect(
      gw.upstreamCalls().filter((c) => c.startsWith('POST /external/v1/withdrawal-intents')),
    ).toHaveLength(1);
    expect(depositCalls()).toHaveLength(AT_ONCE);
    expect(queued.get(scopeOf(merchant.key))).toBe(1);
    await reads;
  });
});

describe('normal screens never wait', () => {
  it('S1 and S3 of the benchmark make their calls without queueing, at the default share', async () => {
    const world = seedWorld({ wallets: 20, deposits: 3_000, withdrawals: 500 });
    const waited: string[] = [];
    const big = await startTestGateway({
      store: world.store,
      upstream: { fairShare: { onQueued: (scope: string) => waited.push(scope) } },
    });
    try {
      const key = DEMO_KEYS.acmeReadWrite;
      const s1 = await big.request(
        '{ wallets(first: 20) { nodes { id address assets { currencyCode balance { availableAmount lockedAmount } } } } }',
        {},
        { key },
      );
      expect(s1.body.errors).toBeUndefined();
      const walletId = (s1.body.data as { wallets: { nodes: { id: string }[] } }).wallets.nodes[0]?.id;
      const s3 = await big.request(
        'query($id: ID!) { wallet(id: $id) { address assets { currencyCode balance { availableAmount } } deposits(first: 10) { nodes { id amount status } } withdrawalIntents(first: 10) { nodes { id amount status } } } }',
        { id: walletId },
        { key },
      );
      expect(s3.body.errors).toBeUndefined();
      // Ten of each at once, as a busy app's screens would come.
      const screens = await Promise.all(
        Array.from({ length: 10 }, () =>
          big.request(
            'query($id: ID!) { wallet(id: $id) { deposits(first: 10) { nodes { id } } withdrawalIntents(first: 10) { nodes { id } } } }',
            { id: walletId },
            { key },
          ),
        ),
      );
      for (const screen of screens) expect(screen.body.errors).toBeUndefined();
      expect(big.upstreamCalls().length).toBeGreaterThanOrEqual(4);
      expect(waited).toEqual([]);
    } finally {
      await big.close();
    }
  });
});

describe("each key's whole-list walks", () => {
  it(`runs ${WALKS_PER_KEY} of one key's walks at once; its next waits unsent while another key's walk runs`, async () => {
    // Each with its own wallet page, so that no two share their REST calls (coalescing).
    const walkOf = (list: 'deposits' | 'withdrawalIntents', status: string, wallets: number) =>
      `{ wallets(first: ${wallets}) { nodes { ${list}(first: 1, status: [${status}]) { totalCount } } } }`;
    const statuses = ['COMPLETED', 'PENDING', 'PROCESSING', 'FAILED'];
    // Each walk that runs, at its read of deposits by status (the list read before it is shared).
    await holdDeposits(WALKS_PER_KEY, HOLD_MS, '/external/v1/deposits?page=1&size=250&statusIn=');
    const walletReads = (merchant: { id: string }) =>
      gw.sandbox.sandbox.requests.filter(
        (r) => r.path.startsWith('/external/v1/wallets') && r.merchantId === merchant.id,
      ).length;
    const busyWalks = Array.from({ length: WALKS_PER_KEY + 1 }, (_, i) =>
      gw.request(walkOf('deposits', statuses[i] ?? 'COMPLETED', i + 1), {}, { key: busy.key }),
    );
    // Two walks run (their wallet read done, their deposits held); the third has not started.
    await expect.poll(() => walletReads(busy)).toBe(WALKS_PER_KEY);
    const otherWalk = await gw.request(walkOf('withdrawalIntents', 'COMPLETED', 1), {}, { key: other.key });
    expect(otherWalk.body.errors).toBeUndefined();
    expect(walletReads(busy)).toBe(WALKS_PER_KEY);
    const answers = await Promise.all(busyWalks);
    for (const answer of answers) expect(answer.body.errors).toBeUndefined();
    expect(walletReads(busy)).toBe(WALKS_PER_KEY + 1);
  });
});

describe("each key's pace past its share", () => {
  let paced: TestGateway;
  const waited = new Map<string, number>();
  beforeAll(async () => {
    // A pace of 1 expensive call a second, and a share too large to matter: only the pace holds.
    paced = await startTestGateway({
      upstream: {
        fairShare: {
          callsPerKey: 100,
          callsPerSecond: 1,
          onQueued: (scope: string) => waited.set(scope, (waited.get(scope) ?? 0) + 1),
        },
      },
    });
  });
  afterAll(() => paced.close());

  it("sends a key's expensive calls at its pace, and fails unsent one that could not go before its deadline", async () => {
    const merchant = await paced.sandbox.world.merchant();
    const authorization = `Bearer ${merchant.key}`;
    const scope = paced.client.scopeOf(authorization);
    const caller = paced.client.caller(authorization, { deadline: Date.now() + 10_000 });
    for (let i = 0; i < FREE_CALLS_PER_REQUEST; i++)
      await paced.client.listWallets(caller, { page: 1, size: i + 1 });
    // Another request of the key, its free calls made now. Its deadline, 2 s on, comes before the
    // turn of a third expensive call made after it (2 s after the first): it must be refused.
    const hurried = paced.client.caller(authorization, { deadline: Date.now() + 2_000 });
    for (let i = 0; i < FREE_CALLS_PER_REQUEST; i++)
      await paced.client.listWallets(hurried, { page: 1, size: i + 1 });
    paced.resetCalls();
    // A second's worth (one call) goes at once; the next waits for its turn, then goes. Both are
    // made together, so the second comes well within the first's second however slow the machine.
    const first = paced.client.listDeposits(caller, { page: 1, size: 1 });
    const second = paced.client.listDeposits(caller, { page: 1, size: 2 });
    await Promise.all([first, second]);
    expect(waited.get(scope)).toBe(1);
    expect(paced.upstreamCalls()).toHaveLength(2);
    // The request whose deadline comes before its turn: refused at once, never sent.
    paced.resetCalls();
    const error = (await paced.client
      .listDeposits(hurried, { page: 1, size: 3 })
      .catch((e) => e)) as GatewayError;
    expect(error.code).toBe('UPSTREAM_TIMEOUT');
    expect(paced.upstreamCalls()).toHaveLength(0);
    expect(hurried.calls.made).toBe(FREE_CALLS_PER_REQUEST);
    // Another key is not paced by this one's turns.
    const other = await paced.sandbox.world.merchant();
    const its = paced.client.caller(`Bearer ${other.key}`, { deadline: Date.now() + 10_000 });
    for (let i = 0; i <= FREE_CALLS_PER_REQUEST; i++)
      await paced.client.listWallets(its, { page: 1, size: i + 1 });
    expect(waited.has(paced.client.scopeOf(`Bearer ${other.key}`))).toBe(false);
    expect(paced.client.activity()).toMatchObject({ calls: 0, timers: 0 });
  });
});
