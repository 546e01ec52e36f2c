import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Money } from '../../../src/sandbox/money.ts';
import { bigMerchant } from '../../support/big-merchant.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';

/**
 * A merchant is one merchant whichever of its keys calls (src/upstream/merchants.ts): its keys
 * share one wallet index, one build, one fair share. Counted in REST calls against the sandbox,
 * with a merchant of 20,000 deposits whose quiet wallet holds the 10 oldest, a second merchant
 * that must never share with it, and a third whose key sees no wallet.
 */

const FIRST_KEY = 'mw_test_merchants_first_key';
const DEPOSITS = 20_000;
const QUIET_DEPOSITS = 10;

let random = 11;
const world = bigMerchant({
  key: FIRST_KEY,
  wallets: 3,
  deposits: DEPOSITS,
  walletOf: (i) => {
    if (i < QUIET_DEPOSITS) return 0;
    random = (Math.imul(random, 1_103_515_245) + 12_345) >>> 0;
    return 1 + ((random >>> 16) % 2);
  },
});
const { store } = world;
const [quiet] = world.wallets as [string, ...string[]];

// Another merchant, with its own long history: it must never use the first one's index.
const other = store.createMerchant('Other Merchant', null);
const OTHER_KEY = store.createApiKey(other.id, 'other', 'read_write').key;
const otherWallet = store.createWallet(other.id, { USDT: new Money('5') }).id;
for (let i = 0; i < 300; i++)
  store.createDeposit(otherWallet, {
    currencyCode: 'USDT',
    amount: new Money('1'),
    amountFee: new Money('0.1'),
    status: 'completed',
  });
// A merchant without wallets: its key is a merchant of its own.
const empty = store.createMerchant('Empty Merchant', null);
const EMPTY_KEY = store.createApiKey(empty.id, 'empty', 'read_write').key;

let gw: TestGateway;

beforeAll(async () => {
  // A cost limit under a whole-list walk (100 reads × 100), as in wallet-index.test.ts: a wallet's
  // totalCount passes only with its merchant's index.
  gw = await startTestGateway({ store, config: { queryLimits: { maxCost: 9_000 } } });
});
beforeEach(() => gw.resetCalls());
afterAll(() => gw.close());

const indexing = () => gw.runtime.walletIndexing;
const depositCalls = () => gw.upstreamCalls().filter((call) => call.includes('/deposits'));
const scopeOf = (key: string) => gw.client.scopeOf(`Bearer ${key}`);
const merchantOf = (key: string) => gw.client.merchants.of(scopeOf(key));

const quietScreen = async (key: string, walletId = quiet) => {
  const { body } = await gw.request(
    `{ wallet(id: "${walletId}") { id deposits(first: 10) { totalCount nodes { restId } } } }`,
    {},
    { key },
  );
  return body as {
    errors?: { extensions?: { code?: string } }[];
    data?: { wallet: { deposits: { totalCount: number; nodes: { restId: string }[] } | null } | null };
  };
};

const newKey = (name: string) => store.createApiKey(world.merchantId, name, 'read_write').key;

describe("a merchant's keys share its wallet index", () => {
  it("the first key's quiet wallet screen builds the merchant's index once", async () => {
    // Without the index its totalCount would walk the list: refused by the cost limit, before any
    // REST call but the one that tells the gateway whose key this is.
    const refused = await quietScreen(FIRST_KEY);
    expect(refused.errors?.[0]?.extensions?.code).toBe('QUERY_LIMIT_EXCEEDED');
    expect(gw.upstreamCalls()).toEqual(['GET /external/v1/wallets?page=1&size=100']);
    const { body } = await gw.request(
      `{ wallet(id: "${quiet}") { deposits(first: 10) { nodes { restId } } } }`,
      {},
      { key: FIRST_KEY },
    );
    expect(body.errors).toBeUndefined();
    await indexing()?.builds.idle();
    expect(indexing()?.builds.calls).toBeGreaterThan(0);
    expect(indexing()?.indexes.ready(merchantOf(FIRST_KEY), 'deposits')).toBe(true);
  });

  it('a new key of the merchant gets its quiet wallet screen at the warm cost from its first request, with no second build', async () => {
    const builds = indexing()?.builds.calls;
    for (const name of ['mobile', 'back office']) {
      const key = newKey(name);
      gw.resetCalls();
      const screen = await quietScreen(key);
      expect(screen.errors).toBeUndefined();
      expect(screen.data?.wallet?.deposits?.nodes.map((n) => n.restId)).toEqual(world.truth.get(quiet));
      expect(screen.data?.wallet?.deposits?.totalCount).toBe(QUIET_DEPOSITS);
      // Its wallets once (whose key is this?), the wallet, the newest page and one small page.
      const calls = gw.upstreamCalls();
      expect(calls).toContain('GET /external/v1/wallets?page=1&size=100');
      expect(calls).toContain(`GET /external/v1/wallets/${quiet}`);
      expect(depositCalls()).toHaveLength(2);
      expect(calls.length).toBeLessThanOrEqual(4);
      expect(merchantOf(key)).toBe(merchantOf(FIRST_KEY));
    }
    await indexing()?.builds.idle();
    expect(indexing()?.builds.calls).toBe(builds);
  });

  it('a rotated key (new key, old key revoked) keeps the warm screen; the revoked key is refused and no longer counts as the merchant', async () => {
    const rotated = newKey('rotated');
    const old = newKey('to revoke');
    expect((await quietScreen(old)).errors).toBeUndefined();
    const record = store.authenticate(old);
    store.revokeApiKey(record?.id as string);
    const refused = await quietScreen(old);
    expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(gw.client.merchants.known(scopeOf(old))).toBe(false);
    gw.resetCalls();
    const screen = await quietScreen(rotated);
    expect(screen.errors).toBeUndefined();
    expect(screen.data?.wallet?.deposits?.nodes.map((n) => n.restId)).toEqual(world.truth.get(quiet));
    expect(depositCalls()).toHaveLength(2);
  });

  it("another merchant never shares: the first merchant's index does not count for it, and it sees only its own", async () => {
    // The first merchant's quiet wallet, named by another merchant's key: its cost is counted
    // without an index (its merchant has none), so it is refused as a new merchant's would be.
    const screen = await quietScreen(OTHER_KEY);
    expect(screen.errors?.[0]?.extensions?.code).toBe('QUERY_LIMIT_EXCEEDED');
    expect(merchantOf(OTHER_KEY)).toMatch(/^m\./);
    expect(merchantOf(OTHER_KEY)).not.toBe(merchantOf(FIRST_KEY));
    const named = await gw.request(`{ wallet(id: "${quiet}") { id } }`, {}, { key: OTHER_KEY });
    expect(named.body.data).toEqual({ wallet: null });
    const own = await gw.request(
      `{ wallet(id: "${otherWallet}") { deposits(first: 300) { nodes { restId } } } }`,
      {},
      { key: OTHER_KEY },
    );
    expect(own.body.errors).toBeUndefined();
    const deposits = (own.body.data as { wallet: { deposits: { nodes: { restId: string }[] } } }).wallet
      .deposits.nodes;
    expect(deposits).toHaveLength(300);
    const theirs = new Set(store.listDeposits(other.id, 1, 1000).items.map((d) => d.id));
    expect(deposits.every((d) => theirs.has(d.restId))).toBe(true);
    await indexing()?.builds.idle();
    expect(indexing()?.indexes.ready(merchantOf(FIRST_KEY), 'deposits')).toBe(true);
  });

  it('a key that sees no wallet stays a merchant of its own, and its refusal costs one read of its wallets', async () => {
    const screen = await quietScreen(EMPTY_KEY);
    expect(screen.data?.wallet ?? null).toBeNull();
    expect(merchantOf(EMPTY_KEY)).toBe(scopeOf(EMPTY_KEY));
    expect(gw.client.merchants.known(scopeOf(EMPTY_KEY))).toBe(true);
    gw.resetCalls();
    await quietScreen(EMPTY_KEY);
    // Known now: no second read of its wallets to learn what it is.
    expect(gw.upstreamCalls().filter((call) => call.includes('/wallets?'))).toEqual([]);
  });
});
