import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bigMerchant } from '../../support/big-merchant.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';

/**
 * A wallet's lists at a merchant with a long history, counted in REST calls: before the merchant's
 * wallet index exists (walks from the cursor's age), once it is built (a window costs its newest
 * page and the few small pages its items lie in, at any depth), and when the REST API contradicts
 * it (discarded, the request walks and answers right).
 */

const KEY = 'mw_test_big_merchant_key';
const DEPOSITS = 20_000;
const QUIET_DEPOSITS = 10;

// The quiet wallet's deposits are the oldest of all; four busy wallets share the rest at random.
let random = 7;
const world = bigMerchant({
  key: KEY,
  wallets: 5,
  deposits: DEPOSITS,
  walletOf: (i) => {
    if (i < QUIET_DEPOSITS) return 0;
    random = (Math.imul(random, 1_103_515_245) + 12_345) >>> 0;
    return 1 + ((random >>> 16) % 4);
  },
});
const [quiet, ...busy] = world.wallets as [string, ...string[]];
/** Each wallet's deposit ids, newest first: the ground truth. */
const truth = world.truth;
let gw: TestGateway;

beforeAll(async () => {
  // A cost limit under a whole-list walk (100 reads × 100): a wallet's totalCount passes only once
  // the merchant's index is built.
  gw = await startTestGateway({ store: world.store, config: { queryLimits: { maxCost: 9_000 } } });
});
beforeEach(() => gw.resetCalls());
afterAll(() => gw.close());

const indexing = () => gw.runtime.walletIndexing;

const depositsPage = async (walletId: string, args: string) => {
  const { body } = await gw.request(
    `{ wallet(id: "${walletId}") { deposits(${args}) { totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } nodes { restId } } } }`,
    {},
    { key: KEY },
  );
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return (
    body.data as {
      wallet: {
        deposits: {
          totalCount: number;
          pageInfo: {
            hasNextPage: boolean;
            hasPreviousPage: boolean;
            startCursor: string;
            endCursor: string;
          };
          nodes: { restId: string }[];
        };
      };
    }
  ).wallet.deposits;
};

const depositCalls = () => gw.upstreamCalls().filter((call) => call.includes('/deposits'));

describe('a wallet of a merchant with 20,000 deposits', () => {
  it("before the index, a wallet's totalCount counts as a walk of the whole list, and the advice says why", async () => {
    const { body } = await gw.request(
      `{ wallet(id: "${quiet}") { deposits(first: 10) { totalCount } } }`,
      {},
      { key: KEY },
    );
    expect(body.errors?.[0]?.extensions?.code).toBe('QUERY_LIMIT_EXCEEDED');
    expect(body.errors?.[0]?.message).toMatch(/wallet index is built in the background/);
    // Only its wallets, read once to learn whose key it is (another key's index would count).
    expect(gw.upstreamCalls()).toEqual(['GET /external/v1/wallets?page=1&size=100']);
  });

  it('before the index: the quiet wallet walks the list once, and the walk asks for the index', async () => {
    const { body } = await gw.request(
      `{ wallet(id: "${quiet}") { deposits(first: 10) { nodes { restId } } } }`,
      {},
      { key: KEY },
    );
    expect(body.errors).toBeUndefined();
    const ids = (body.data as { wallet: { deposits: { nodes: { restId: string }[] } } }).wallet.deposits
      .nodes;
    expect(ids.map((n) => n.restId)).toEqual(truth.get(quiet));
    await indexing()?.builds.idle();
    // The newest 250, then 1000 at a time from there, each page read once by the walk (the build,
    // started by the walk, reads pages of 1000 too; with the micro-cache on they are shared).
    const calls = depositCalls();
    expect(calls[0]).toBe('GET /external/v1/deposits?page=1&size=250');
    const walk = calls.length - (indexing()?.builds.calls ?? 0);
    expect(walk).toBeLessThanOrEqual(2 + Math.ceil(DEPOSITS / 1000));
    expect(calls.length - new Set(calls).size).toBeLessThanOrEqual(indexing()?.builds.calls ?? 0);
    // The build read the list once, 1000 at a time, from the oldest end.
    expect(indexing()?.builds.calls).toBeLessThanOrEqual(Math.ceil(DEPOSITS / 1000) + 2);
  });

  it('with the index: the quiet wallet screen is its wallet, the newest page and one small page', async () => {
    await indexing()?.builds.idle();
    gw.resetCalls();
    // The same totalCount as before the index, now counted as the read it is, passes.
    const page = await depositsPage(quiet, 'first: 10');
    expect(page.nodes.map((n) => n.restId)).toEqual(truth.get(quiet));
    expect(page.totalCount).toBe(QUIET_DEPOSITS);
    expect(page.pageInfo.hasNextPage).toBe(false);
    const calls = depositCalls();
    expect(calls).toHaveLength(2);
    expect(calls[0]).toBe('GET /external/v1/deposits?page=1&size=250');
    expect(
      Number(new URL(`http://x${calls[1]?.split(' ')[1]}`).searchParams.get('size')),
    ).toBeLessThanOrEqual(250);
  });

  it('with the index: `last: 3` reads the oldest three where they lie, not the whole list', async () => {
    await indexing()?.builds.idle();
    gw.resetCalls();
    const page = await depositsPage(busy[0] as string, 'last: 3');
    expect(page.nodes.map((n) => n.restId)).toEqual(truth.get(busy[0] as string)?.slice(-3));
    expect(page.pageInfo.hasNextPage).toBe(false);
    expect(page.pageInfo.hasPreviousPage).toBe(true);
    expect(depositCalls().length).toBeLessThanOrEqual(2);
  });

  it('with the index: every page of a busy wallet, to the end, costs the same few calls however deep', async () => {
    await indexing()?.builds.idle();
    const expected = truth.get(busy[1] as string) as string[];
    const seen: string[] = [];
    const perPage: number[] = [];
    let after: string | null = null;
    for (;;) {
      gw.resetCalls();
      const page = await depositsPage(busy[1] as string, `first: 250${after ? `, after: "${after}"` : ''}`);
      perPage.push(depositCalls().length);
      seen.push(...page.nodes.map((n) => n.restId));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen).toEqual(expected);
    // 250 of a quarter of the list lie within about 1,000 positions: the newest page and a handful of 250.
    for (const calls of perPage) expect(calls).toBeLessThanOrEqual(1 + 6);
  });

  it('paging backwards from a cursor with the index gives the same items in the same order', async () => {
    await indexing()?.builds.idle();
    const expected = truth.get(busy[2] as string) as string[];
    const middle = await depositsPage(busy[2] as string, 'first: 100');
    const next = await depositsPage(busy[2] as string, `first: 100, after: "${middle.pageInfo.endCursor}"`);
    const back = await depositsPage(busy[2] as string, `last: 100, before: "${next.pageInfo.startCursor}"`);
    expect(back.nodes.map((n) => n.restId)).toEqual(expected.slice(0, 100));
    expect(next.nodes.map((n) => n.restId)).toEqual(expected.slice(100, 200));
  });

  it('an index the REST API contradicts is discarded: the request walks, answers right, and the index is built again', async () => {
    await indexing()?.builds.idle();
    gw.resetCalls();
    await depositsPage(quiet, 'first: 10');
    // The small page the quiet wallet's deposits lie in, per the index.
    const where = depositCalls()[1]?.split(' ')[1] as string;
    // Answered once with the newest deposits instead (another wallet's, at those positions).
    const newest = await gw.sandbox.call('GET', '/external/v1/deposits?page=1&size=250', { key: KEY });
    const wrong = newest.body as { paging: Record<string, number>; data: unknown[] };
    await gw.sandbox.admin('POST', '/faults', {
      method: 'GET',
      path: where,
      status: 200,
      times: 1,
      body: JSON.stringify({ ...wrong, data: wrong.data.slice(0, QUIET_DEPOSITS) }),
    });
    const before = indexing()?.builds.calls ?? 0;
    gw.resetCalls();
    const page = await depositsPage(quiet, 'first: 10');
    expect(page.nodes.map((n) => n.restId)).toEqual(truth.get(quiet));
    expect(page.totalCount).toBe(QUIET_DEPOSITS);
    // The faulted page was read, then the walk from the newest end (which asks for a new index).
    expect(depositCalls()).toContain(`GET ${where}`);
    expect(depositCalls().length).toBeGreaterThan(3);
    await indexing()?.builds.idle();
    expect((indexing()?.builds.calls ?? 0) - before).toBeGreaterThan(Math.floor(DEPOSITS / 1000) - 1);
    gw.resetCalls();
    expect((await depositsPage(quiet, 'first: 10')).nodes.map((n) => n.restId)).toEqual(truth.get(quiet));
    expect(depositCalls()).toHaveLength(2);
  });
});
