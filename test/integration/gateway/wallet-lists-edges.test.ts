import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bigMerchant } from '../../support/big-merchant.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';

/**
 * A wallet's lists at the edges an attack review found: a page from the micro-cache older than the
 * request's newest, a wallet whose items are spread far apart, and a status filter's cost once the
 * index exists. Each case failed before its fix.
 */

const KEY = 'mw_test_wallet_list_edges';

type Page = { wallet: { deposits: { nodes: { restId: string }[] } } };

async function query(gw: TestGateway, text: string) {
  const { body } = await gw.request(text, {}, { key: KEY });
  return body;
}

describe.each([
  ['without the index', 0],
  ['with the index', 64 * 1024 * 1024],
])('a walk meets a cached page older than its newest page (%s)', (_name, maxBytes) => {
  // 3,000 deposits; the quiet wallet holds the 10 oldest.
  const world = bigMerchant({ key: KEY, wallets: 2, deposits: 3_000, walletOf: (i) => (i < 10 ? 0 : 1) });
  const [quiet] = world.wallets as [string, string];
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      store: world.store,
      config: { walletIndex: { maxBytes } },
      upstream: { cacheTtlMs: 60_000 },
    });
  });
  afterAll(() => gw.close());

  it("the quiet wallet's items all come, though 5 deposits arrived after the page was cached", async () => {
    // A merchant-wide page of 1000 lands in the micro-cache, then the list grows.
    const first = await query(gw, '{ deposits(first: 1000) { pageInfo { endCursor } } }');
    const after = (first.data as { deposits: { pageInfo: { endCursor: string } } }).deposits.pageInfo
      .endCursor;
    await query(gw, `{ deposits(first: 1000, after: "${after}") { nodes { id } } }`);
    for (let i = 0; i < 5; i++) world.deposit(1);
    const body = await query(gw, `{ wallet(id: "${quiet}") { deposits(first: 10) { nodes { restId } } } }`);
    expect(body.errors).toBeUndefined();
    expect((body.data as Page).wallet.deposits.nodes.map((n) => n.restId)).toEqual(world.truth.get(quiet));
  });
});

describe('a wallet whose items are spread one in 300 over 40,000 deposits', () => {
  const world = bigMerchant({
    key: KEY,
    wallets: 2,
    deposits: 40_000,
    walletOf: (i) => (i % 300 === 0 ? 0 : 1),
  });
  const [spread] = world.wallets as [string, string];
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ store: world.store });
  });
  afterAll(() => gw.close());

  it('is answered once indexed, in no more calls than a walk over the list', async () => {
    const text = `{ wallet(id: "${spread}") { deposits(first: 134) { nodes { restId } } } }`;
    expect((await query(gw, text)).errors).toBeUndefined();
    await gw.runtime.walletIndexing?.builds.idle();
    gw.resetCalls();
    const body = await query(gw, text);
    expect(body.errors).toBeUndefined();
    expect((body.data as Page).wallet.deposits.nodes.map((n) => n.restId)).toEqual(world.truth.get(spread));
    // Before: one small page per item, 134 calls, refused at the budget of 100. A walk reads 41.
    expect(gw.upstreamCalls().filter((call) => call.includes('/deposits')).length).toBeLessThanOrEqual(42);
  });
});

describe("a status filter's totalCount once the index exists", () => {
  const world = bigMerchant({ key: KEY, wallets: 2, deposits: 20_000, walletOf: (i) => (i < 10 ? 0 : 1) });
  const [quiet] = world.wallets as [string, string];
  let gw: TestGateway;
  beforeAll(async () => {
    // Under a whole-list walk (100 reads × 100).
    gw = await startTestGateway({ store: world.store, config: { queryLimits: { maxCost: 9_000 } } });
  });
  afterAll(() => gw.close());

  it('still counts as a walk of the filtered list: refused before any REST call', async () => {
    await query(gw, `{ wallet(id: "${quiet}") { deposits(first: 10) { nodes { restId } } } }`);
    await gw.runtime.walletIndexing?.builds.idle();
    // Unfiltered, the index answers it: accepted.
    expect(
      (await query(gw, `{ wallet(id: "${quiet}") { deposits(first: 10) { totalCount } } }`)).errors,
    ).toBeUndefined();
    gw.resetCalls();
    const body = await query(
      gw,
      `{ wallet(id: "${quiet}") { deposits(first: 10, status: [COMPLETED]) { totalCount } } }`,
    );
    expect(body.errors?.[0]?.extensions?.code).toBe('QUERY_LIMIT_EXCEEDED');
    expect(gw.upstreamCalls()).toEqual([]);
  });
});
