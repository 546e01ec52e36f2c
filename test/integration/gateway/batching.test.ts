import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLoaders } from '../../../src/loaders/loaders.ts';
import { ActivityFeedDocument, DashboardDocument, WalletScreenDocument } from '../../generated/graphql.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';

let gw: TestGateway;
let key: string;
let walletIds: string[];

beforeAll(async () => {
  // Wallet lists walked, as without an index: wallet-index.test.ts counts the calls with one.
  gw = await startTestGateway({ config: { walletIndex: { maxBytes: 0 } } });
  const merchant = await gw.sandbox.world.merchant();
  key = merchant.key;
  walletIds = [];
  for (let i = 0; i < 20; i++) walletIds.push((await gw.sandbox.world.wallet(merchant.id)).id);
  // 300 deposits spread round-robin over the 20 wallets: any 100 consecutive ones hold 5 per wallet.
  for (let i = 0; i < 300; i++) {
    await gw.sandbox.world.deposit(walletIds[i % 20] as string, { amount: `${i + 1}.00` });
  }
});
beforeEach(() => gw.resetCalls());
afterAll(() => gw.close());

describe('N+1 freedom, by counted upstream calls', () => {
  it('dashboard: wallets(first: 20) with balances is 1 call', async () => {
    const { body } = await gw.run(DashboardDocument, { first: 20 }, key);
    expect(body.errors).toBeUndefined();
    expect(body.data?.wallets?.nodes).toHaveLength(20);
    expect(gw.upstreamCalls()).toEqual(['GET /external/v1/wallets?page=1&size=20']);
  });

  it('deposits(first: 50) { nodes { wallet { address } } } is 2 calls: the page and the wallet list', async () => {
    const { body } = await gw.run(ActivityFeedDocument, { first: 50 }, key);
    expect(body.errors).toBeUndefined();
    const nodes = body.data?.deposits?.edges.map((e) => e.node) ?? [];
    expect(nodes).toHaveLength(50);
    expect(new Set(nodes.map((n) => n.wallet?.address)).size).toBe(20);
    expect(gw.upstreamCalls().sort()).toEqual([
      'GET /external/v1/deposits?page=1&size=50',
      'GET /external/v1/wallets?page=1&size=1000',
    ]);
  });

  it('the wallet list of a feed is fetched in parallel with its page, not one round trip after it', async () => {
    // The page fails at once: a gateway that waited for it would never ask for the wallets.
    await gw.sandbox.admin('POST', '/faults', {
      method: 'GET',
      path: '/external/v1/withdrawal-intents',
      status: 500,
      times: 1,
    });
    const { body } = await gw.request(
      `{ withdrawalIntents(first: 10) { edges { node { wallet { address } } } } }`,
      {},
      { key },
    );
    expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    expect(gw.upstreamCalls().sort()).toEqual([
      'GET /external/v1/wallets?page=1&size=1000',
      'GET /external/v1/withdrawal-intents?page=1&size=10',
    ]);
    gw.resetCalls();
    await gw.request(`{ deposits(first: 10) { nodes { amount walletRestId } } }`, {}, { key });
    expect(gw.upstreamCalls()).toEqual(['GET /external/v1/deposits?page=1&size=10']);
  });

  it('a single distinct wallet is fetched by id, once', async () => {
    const { body } = await gw.request(
      `{ deposits(first: 1) { nodes { wallet { address } walletRestId } } again: deposits(first: 1) { nodes { wallet { id } } } }`,
      {},
      { key },
    );
    const walletId = (body.data as { deposits: { nodes: { walletRestId: string }[] } }).deposits.nodes[0]
      ?.walletRestId;
    expect(gw.upstreamCalls()).toEqual([
      'GET /external/v1/deposits?page=1&size=1',
      `GET /external/v1/wallets/${walletId}`,
    ]);
  });

  it('wallets(first: 20) { nodes { deposits(first: 5) } } is 2 calls: wallets and one shared scan page', async () => {
    const { body } = await gw.request(
      `{ wallets(first: 20) { nodes { restId deposits(first: 5) { nodes { amount walletRestId } } } } }`,
      {},
      { key },
    );
    expect(body.errors).toBeUndefined();
    const wallets = (
      body.data as {
        wallets: { nodes: { restId: string; deposits: { nodes: { walletRestId: string }[] } }[] };
      }
    ).wallets.nodes;
    for (const wallet of wallets) {
      expect(wallet.deposits.nodes).toHaveLength(5);
      for (const d of wallet.deposits.nodes) expect(d.walletRestId).toBe(wallet.restId);
    }
    expect(gw.upstreamCalls()).toEqual([
      'GET /external/v1/wallets?page=1&size=20',
      'GET /external/v1/deposits?page=1&size=250',
    ]);
  });

  it('the wallet screen is 3 calls: the wallet, one deposit scan page, one withdrawal scan page', async () => {
    const { body } = await gw.run(WalletScreenDocument, { id: walletIds[3] as string }, key);
    expect(body.errors).toBeUndefined();
    expect(body.data?.wallet?.deposits?.nodes).toHaveLength(10);
    expect(gw.upstreamCalls().sort()).toEqual(
      [
        `GET /external/v1/wallets/${walletIds[3]}`,
        'GET /external/v1/deposits?page=1&size=250',
        'GET /external/v1/withdrawal-intents?page=1&size=250',
      ].sort(),
    );
  });

  it("the wallet screen's lists do not wait for the wallet: their first reads leave while its call is unanswered", async () => {
    // The wallet's own call is answered only after 3 s; the lists' newest pages must already be
    // asked for by then (before, they were asked for only once the wallet had arrived).
    await gw.sandbox.admin('POST', '/faults', {
      method: 'GET',
      path: `/external/v1/wallets/${walletIds[3]}`,
      latencyMs: 3_000,
      times: 1,
    });
    const answer = gw.run(WalletScreenDocument, { id: walletIds[3] as string }, key);
    const requests = gw.sandbox.sandbox.requests;
    const walletCall = () => requests.find((r) => r.path.startsWith(`/external/v1/wallets/${walletIds[3]}`));
    const lists = () =>
      requests.filter((r) => /\/(deposits|withdrawal-intents)\?page=1&size=250$/.test(r.path));
    for (let i = 0; i < 200 && lists().length < 2; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(lists()).toHaveLength(2);
    expect(walletCall()?.status).toBe(0);
    const { body } = await answer;
    expect(body.errors).toBeUndefined();
    expect(body.data?.wallet?.deposits?.nodes).toHaveLength(10);
    expect(gw.upstreamCalls()).toHaveLength(3);
  });

  it('a wallet scan reads on only as far as the window needs, and for hasNextPage only when selected', async () => {
    // Wallet 0 has 15 deposits, 12 of them among the latest 250.
    const query = (extra: string) =>
      `{ wallet(id: "${walletIds[0]}") { deposits(first: 12) { nodes { amount } ${extra} } } }`;
    await gw.request(query(''), {}, { key });
    expect(gw.upstreamCalls().sort()).toEqual(
      [`GET /external/v1/wallets/${walletIds[0]}`, 'GET /external/v1/deposits?page=1&size=250'].sort(),
    );
    gw.resetCalls();
    const { body } = await gw.request(query('pageInfo { hasNextPage }'), {}, { key });
    expect(body.data).toMatchObject({ wallet: { deposits: { pageInfo: { hasNextPage: true } } } });
    // The walk reads on from where the newest page ended, never that page again.
    expect(gw.upstreamCalls().sort()).toEqual(
      [
        `GET /external/v1/wallets/${walletIds[0]}`,
        'GET /external/v1/deposits?page=1&size=250',
        'GET /external/v1/deposits?page=2&size=250',
      ].sort(),
    );
  });

  it('totalCount of a wallet scan walks the list only when selected', async () => {
    await gw.request(
      `{ wallet(id: "${walletIds[0]}") { deposits(first: 1) { nodes { amount } } } }`,
      {},
      { key },
    );
    expect(gw.upstreamCalls()).toHaveLength(2);
    gw.resetCalls();
    const { body } = await gw.request(
      `{ wallet(id: "${walletIds[0]}") { deposits(first: 1) { totalCount } } }`,
      {},
      { key },
    );
    expect((body.data as { wallet: { deposits: { totalCount: number } } }).wallet.deposits.totalCount).toBe(
      15,
    );
    expect(gw.upstreamCalls().sort()).toEqual(
      [
        `GET /external/v1/wallets/${walletIds[0]}`,
        'GET /external/v1/deposits?page=1&size=250',
        'GET /external/v1/deposits?page=2&size=250',
      ].sort(),
    );
  });

  it('nodes(ids:) with many wallet ids is one list call; identical list fields share one call', async () => {
    const { body: dashboard } = await gw.run(DashboardDocument, { first: 5 }, key);
    const ids = dashboard.data?.wallets?.nodes.map((n) => n.id) ?? [];
    gw.resetCalls();
    const { body } = await gw.request(
      `query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Wallet { address } } a: wallets(first: 3) { totalCount } b: wallets(first: 3) { totalCount } }`,
      { ids },
      { key },
    );
    expect(body.errors).toBeUndefined();
    expect((body.data as { nodes: { id: string }[] }).nodes.map((n) => n.id)).toEqual(ids);
    expect(gw.upstreamCalls().sort()).toEqual(
      ['GET /external/v1/wallets?page=1&size=1000', 'GET /external/v1/wallets?page=1&size=3'].sort(),
    );
  });

  it('list responses prime the by-id loaders: a listed item is not fetched again', async () => {
    const loaders = createLoaders(gw.client, gw.client.caller(`Bearer ${key}`));
    const page = await loaders.depositsPage({ page: 1, size: 2 });
    const wallets = await loaders.walletsPage({ page: 1, size: 3 });
    const deposit = await loaders.deposit.load(page.items[1]?.id as string);
    const wallet = await loaders.wallet.load(wallets.items[2]?.id as string);
    expect(deposit).toEqual(page.items[1]);
    expect(wallet).toEqual(wallets.items[2]);
    expect(gw.upstreamCalls()).toEqual([
      'GET /external/v1/deposits?page=1&size=2',
      'GET /external/v1/wallets?page=1&size=3',
    ]);
  });
});
