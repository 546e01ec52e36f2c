import { afterEach, describe, expect, it } from 'vitest';
import { bigMerchant } from '../../support/big-merchant.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';

/**
 * A quiet wallet screen of a merchant whose list is longer than one request may walk, before its
 * wallet index exists (src/loaders/wallet-lists.ts, coldWalk): it never spends its call budget for
 * an error. It waits for the index's build when that should end within the request's deadline,
 * and otherwise answers at once, with `retryAfterSeconds` from the build's progress.
 */

const KEY = 'mw_test_cold_index_key';
const DEPOSITS = 20_000;
/** 20 pages of 1000 would walk the list: more than this budget. */
const BUDGET = 10;

const world = () =>
  bigMerchant({ key: KEY, wallets: 2, deposits: DEPOSITS, walletOf: (i) => (i < 10 ? 0 : 1) });

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

const screen = (wallet: string) =>
  (gw as TestGateway).request(
    `{ wallet(id: "${wallet}") { id deposits(first: 10) { nodes { restId } } } }`,
    {},
    { key: KEY },
  );
const walkPages = () =>
  (gw as TestGateway).upstreamCalls().filter((call) => /\/deposits\?page=\d+&size=1000/.test(call));

describe('a cold wallet index', () => {
  it('waits for a build that ends within the deadline, and answers from the index without walking', async () => {
    const { store, wallets, truth } = world();
    gw = await startTestGateway({
      store,
      config: { maxUpstreamCallsPerRequest: BUDGET, walletIndex: { callsPerSecond: 200 } },
    });
    const quiet = wallets[0] as string;
    const { body } = await screen(quiet);
    expect(body.errors).toBeUndefined();
    const nodes = (body.data as { wallet: { deposits: { nodes: { restId: string }[] } } }).wallet.deposits
      .nodes;
    expect(nodes.map((n) => n.restId)).toEqual(truth.get(quiet));
    const builds = gw.runtime.walletIndexing?.builds.calls ?? 0;
    expect(builds).toBeGreaterThanOrEqual(DEPOSITS / 1000);
    // Every page of 1000 was the build's: the request walked none of the list.
    expect(walkPages().length).toBe(builds);
  });

  it('answers at once when the build would end past the deadline: no call past the newest page, and when to retry', async () => {
    const { store, wallets } = world();
    gw = await startTestGateway({
      store,
      // 1 build step a second: about 21 s for the list, past the 15 s deadline.
      config: { maxUpstreamCallsPerRequest: BUDGET, walletIndex: { callsPerSecond: 1 } },
    });
    const quiet = wallets[0] as string;
    const { body } = await screen(quiet);
    const error = body.errors?.[0] as { path?: unknown; extensions?: Record<string, unknown> } | undefined;
    expect(error?.extensions?.code).toBe('QUERY_LIMIT_EXCEEDED');
    expect(error?.extensions?.indexing).toBe(true);
    expect(error?.extensions?.retryAfterSeconds).toBeGreaterThanOrEqual(15);
    expect(error?.path).toEqual(['wallet', 'deposits']);
    // The wallet itself is answered; its list alone failed.
    expect((body.data as { wallet: { id: string; deposits: unknown } }).wallet.deposits).toBeNull();
    // The newest page, the wallet, and the build's first step at most: not the budget.
    const calls = gw.upstreamCalls();
    expect(calls.length).toBeLessThanOrEqual(4);
    expect(calls.length).toBeLessThan(BUDGET);
  });

  it('still walks a list the budget can reach the end of', async () => {
    const { store, wallets, truth } = world();
    gw = await startTestGateway({
      store,
      config: { maxUpstreamCallsPerRequest: 40, walletIndex: { callsPerSecond: 1 } },
    });
    const quiet = wallets[0] as string;
    const { body } = await screen(quiet);
    expect(body.errors).toBeUndefined();
    const nodes = (body.data as { wallet: { deposits: { nodes: { restId: string }[] } } }).wallet.deposits
      .nodes;
    expect(nodes.map((n) => n.restId)).toEqual(truth.get(quiet));
    expect(walkPages().length).toBeGreaterThanOrEqual(DEPOSITS / 1000 - 1);
  });
});
