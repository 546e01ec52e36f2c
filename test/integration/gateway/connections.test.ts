import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';

let gw: TestGateway;
let key: string;
let newestFirst: string[];

const QUERY = `query($first: Int, $after: String, $last: Int, $before: String, $status: [DepositStatus!]) {
  deposits(first: $first, after: $after, last: $last, before: $before, status: $status) {
    totalCount
    edges { cursor node { restId } }
    nodes { restId }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

interface Conn {
  totalCount: number;
  edges: { cursor: string; node: { restId: string } }[];
  nodes: { restId: string }[];
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}

async function deposits(variables: Record<string, unknown>) {
  const { body } = await gw.request(QUERY, variables, { key });
  return { conn: (body.data as { deposits: Conn } | null)?.deposits, errors: body.errors };
}

beforeAll(async () => {
  gw = await startTestGateway();
  const merchant = await gw.sandbox.world.merchant();
  key = merchant.key;
  const wallet = await gw.sandbox.world.wallet(merchant.id);
  for (let i = 0; i < 45; i++) {
    await gw.sandbox.world.deposit(wallet.id, {
      amount: `${i + 1}`,
      status: i % 3 === 0 ? 'pending' : 'completed',
    });
  }
  const all = await gw.sandbox.call('GET', '/external/v1/deposits?size=1000', { key });
  newestFirst = all.body.data.map((d: { id: string }) => d.id);
});
beforeEach(() => gw.resetCalls());
afterAll(() => gw.close());

describe('Relay connections over page/size', () => {
  it('pages forward with first/after, one REST call per window, every item once', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let calls = 0;
    for (;;) {
      gw.resetCalls();
      const { conn } = await deposits({ first: 10, after });
      calls++;
      expect(gw.upstreamCalls()).toHaveLength(1);
      seen.push(...(conn?.nodes.map((n) => n.restId) ?? []));
      expect(conn?.edges.map((e) => e.node.restId)).toEqual(conn?.nodes.map((n) => n.restId));
      expect(conn?.totalCount).toBe(45);
      if (!conn?.pageInfo.hasNextPage) break;
      after = conn.pageInfo.endCursor;
    }
    expect(seen).toEqual(newestFirst);
    expect(calls).toBe(5);
  });

  it('maps a window that straddles REST pages to one wider page when one exists', async () => {
    const { conn: first } = await deposits({ first: 7 });
    gw.resetCalls();
    const { conn } = await deposits({ first: 10, after: first?.pageInfo.endCursor });
    expect(conn?.nodes.map((n) => n.restId)).toEqual(newestFirst.slice(7, 17));
    // Positions 7..16 fit in page 1 of size 17.
    expect(gw.upstreamCalls()).toEqual(['GET /external/v1/deposits?page=1&size=17']);
    expect(conn?.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });
  });

  it('pages backward with last/before', async () => {
    const { conn: page } = await deposits({ first: 20 });
    const before = page?.edges[15]?.cursor;
    gw.resetCalls();
    const { conn } = await deposits({ last: 5, before });
    expect(conn?.nodes.map((n) => n.restId)).toEqual(newestFirst.slice(10, 15));
    expect(conn?.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });
    expect(gw.upstreamCalls()).toHaveLength(1);
  });

  it('serves last without before from the end of the list', async () => {
    const { conn } = await deposits({ last: 4 });
    expect(conn?.nodes.map((n) => n.restId)).toEqual(newestFirst.slice(41));
    expect(conn?.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false });
    // The probe (page 1 of size 4) tells the total; positions 41..44 then fit in page 9 of size 5.
    expect(gw.upstreamCalls()).toEqual([
      'GET /external/v1/deposits?page=1&size=4',
      'GET /external/v1/deposits?page=9&size=5',
    ]);
  });

  it('is empty past the end and for an empty list', async () => {
    const { conn: all } = await deposits({ first: 45 });
    const { conn } = await deposits({ first: 10, after: all?.pageInfo.endCursor });
    expect(conn).toMatchObject({
      nodes: [],
      edges: [],
      totalCount: 45,
      pageInfo: { hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null },
    });
    const other = await gw.sandbox.world.merchant();
    const { body } = await gw.request(QUERY, { first: 10 }, { key: other.key });
    expect((body.data as { deposits: Conn }).deposits).toMatchObject({
      nodes: [],
      totalCount: 0,
      pageInfo: { hasNextPage: false, hasPreviousPage: false },
    });
  });

  it('maps status to statusIn, and refuses a cursor from other filters', async () => {
    const { conn } = await deposits({ first: 5, status: ['PENDING'] });
    expect(conn?.totalCount).toBe(15);
    expect(gw.upstreamCalls()).toEqual(['GET /external/v1/deposits?page=1&size=5&statusIn=pending']);
    const { conn: unfiltered } = await deposits({ first: 5 });
    const { errors } = await deposits({
      first: 5,
      status: ['PENDING'],
      after: unfiltered?.pageInfo.endCursor,
    });
    expect(errors).toEqual([
      expect.objectContaining({
        message: 'after is a cursor from another connection or other filters; request the first page again',
        extensions: { code: 'BAD_USER_INPUT', field: ['after'] },
      }),
    ]);
    const { body: walletsBody } = await gw.request(
      `query($after: String) { wallets(first: 1, after: $after) { totalCount } }`,
      { after: unfiltered?.pageInfo.endCursor },
      { key },
    );
    expect(walletsBody.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
  });

  it('rejects first/last above 1000, negative counts and forged cursors before any upstream call', async () => {
    for (const variables of [{ first: 1001 }, { last: -1 }, { first: 5, after: 'bm9wZQ' }]) {
      const { errors } = await deposits(variables);
      expect(errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    }
    expect(gw.upstreamCalls()).toEqual([]);
    const { conn } = await deposits({ first: 1000 });
    expect(conn?.nodes).toHaveLength(45);
  });

  it('wallet-scoped connections page through the scan with their own cursors', async () => {
    const { body } = await gw.request(
      `{ wallets(first: 1) { nodes { deposits(first: 20) { totalCount pageInfo { endCursor hasNextPage } nodes { restId } } } } }`,
      {},
      { key },
    );
    const first = (body.data as { wallets: { nodes: { deposits: Conn }[] } }).wallets.nodes[0]?.deposits;
    expect(first?.nodes.map((n) => n.restId)).toEqual(newestFirst.slice(0, 20));
    expect(first?.totalCount).toBe(45);
    const { body: next } = await gw.request(
      `query($after: String) { wallets(first: 1) { nodes { deposits(first: 30, after: $after) { nodes { restId } pageInfo { hasNextPage } } } } }`,
      { after: first?.pageInfo.endCursor },
      { key },
    );
    const second = (next.data as { wallets: { nodes: { deposits: Conn }[] } }).wallets.nodes[0]?.deposits;
    expect(second?.nodes.map((n) => n.restId)).toEqual(newestFirst.slice(20));
    expect(second?.pageInfo.hasNextPage).toBe(false);
  });
});

describe('stable cursors', () => {
  it('sees every deposit exactly once while new ones arrive between pages', async () => {
    const merchant = await gw.sandbox.world.merchant();
    const wallet = await gw.sandbox.world.wallet(merchant.id);
    for (let i = 0; i < 30; i++) await gw.sandbox.world.deposit(wallet.id, { amount: `${i + 1}` });
    const before = await gw.sandbox.call('GET', '/external/v1/deposits?size=1000', { key: merchant.key });
    const original: string[] = before.body.data.map((d: { id: string }) => d.id);

    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      const { body } = await gw.request(QUERY, { first: 7, after }, { key: merchant.key });
      const conn = (body.data as { deposits: Conn }).deposits;
      seen.push(...conn.nodes.map((n) => n.restId));
      if (!conn.pageInfo.hasNextPage) break;
      after = conn.pageInfo.endCursor;
      // Three new deposits land at the head of the list before the client asks for the next page.
      for (let i = 0; i < 3; i++) await gw.sandbox.world.deposit(wallet.id, { amount: '0.01' });
    }
    expect(seen).toEqual(original);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('realigns backward paging too, and wallet-scoped cursors', async () => {
    const merchant = await gw.sandbox.world.merchant();
    const wallet = await gw.sandbox.world.wallet(merchant.id);
    for (let i = 0; i < 12; i++) await gw.sandbox.world.deposit(wallet.id, { amount: `${i + 1}` });
    const all = await gw.sandbox.call('GET', '/external/v1/deposits?size=1000', { key: merchant.key });
    const original: string[] = all.body.data.map((d: { id: string }) => d.id);

    const { body: firstPage } = await gw.request(QUERY, { first: 10 }, { key: merchant.key });
    const before = (firstPage.data as { deposits: Conn }).deposits.edges[8]?.cursor;
    const scoped = await gw.request(
      `query($id: ID!) { wallet(id: $id) { deposits(first: 4) { pageInfo { endCursor } } } }`,
      { id: wallet.id },
      { key: merchant.key },
    );
    const scopedAfter = (scoped.body.data as { wallet: { deposits: Conn } }).wallet.deposits.pageInfo
      .endCursor;

    for (let i = 0; i < 2; i++) await gw.sandbox.world.deposit(wallet.id, { amount: '0.01' });

    const { body } = await gw.request(QUERY, { last: 3, before }, { key: merchant.key });
    expect((body.data as { deposits: Conn }).deposits.nodes.map((n) => n.restId)).toEqual(
      original.slice(5, 8),
    );
    const next = await gw.request(
      `query($id: ID!, $after: String) { wallet(id: $id) { deposits(first: 4, after: $after) { nodes { restId } } } }`,
      { id: wallet.id, after: scopedAfter },
      { key: merchant.key },
    );
    expect(
      (next.body.data as { wallet: { deposits: Conn } }).wallet.deposits.nodes.map((n) => n.restId),
    ).toEqual(original.slice(4, 8));
  });
});
