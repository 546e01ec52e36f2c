import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  compose,
  type Labels,
  startLabelsSubgraph,
  startRouter,
  subgraphSdl,
} from '../../../examples/supergraph/supergraph.ts';
import type { RunningServer } from '../../../src/server.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { withdrawalInput } from '../../support/sandbox.ts';

/**
 * The gateway as a Federation subgraph behind Hive Gateway (docs/supergraph.md): composed with a
 * second subgraph that adds `Wallet.label` and hands out Wallet and Deposit references, the
 * client's Authorization forwarded by the router. What the router's client gets, and the REST
 * calls it costs, counted at the sandbox.
 */

let gw: TestGateway;
let served: RunningServer;
let router: Awaited<ReturnType<typeof startRouter>>;
let labelsServer: Awaited<ReturnType<typeof startLabelsSubgraph>>;
const labels: Labels = { labels: new Map(), favouriteWallets: [], recentDeposits: [] };
let key: string;
let walletIds: string[] = [];
let depositIds: string[] = [];

const ask = async (query: string, variables: Record<string, unknown> = {}, apiKey: string | null = key) => {
  const response = await fetch(router.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(apiKey && { authorization: `Bearer ${apiKey}` }) },
    body: JSON.stringify({ query, variables }),
  });
  return {
    status: response.status,
    body: (await response.json()) as {
      data?: Record<string, unknown> | null;
      errors?: { message: string; path?: unknown; extensions?: Record<string, unknown> }[];
    },
  };
};

beforeAll(async () => {
  gw = await startTestGateway({
    config: { federation: true, subscriptions: { pollMs: 50, maxPollMs: 200 } },
  });
  served = await gw.runtime.listen({ port: 0, host: '127.0.0.1' });
  const merchant = await gw.sandbox.world.merchant();
  key = merchant.key;
  for (let i = 0; i < 3; i++) {
    const wallet = (await gw.sandbox.world.wallet(merchant.id)) as { id: string };
    for (let d = 0; d < 2; d++)
      await gw.sandbox.world.deposit(wallet.id, { currencyCode: 'USDT', amount: `${10 + d}.00` });
  }
  const { body } = await gw.request(
    '{ wallets(first: 10) { nodes { id } } deposits(first: 10) { nodes { id } } }',
    {},
    { key },
  );
  const data = body.data as { wallets: { nodes: { id: string }[] }; deposits: { nodes: { id: string }[] } };
  walletIds = data.wallets.nodes.map((n) => n.id);
  depositIds = data.deposits.nodes.map((n) => n.id);
  labels.labels.set(walletIds[0] as string, 'Payouts');
  labels.favouriteWallets = [walletIds[1] as string, walletIds[2] as string];
  labels.recentDeposits = depositIds.slice(0, 3);
  labelsServer = await startLabelsSubgraph(labels);
  const url = `${served.url}/graphql`;
  const supergraph = compose({ sdl: await subgraphSdl(url, key), url }, labelsServer.url);
  router = await startRouter(supergraph);
});
beforeEach(() => gw.resetCalls());
afterAll(async () => {
  await router?.close();
  labelsServer?.server.closeAllConnections();
  await new Promise((resolve) => labelsServer?.server.close(resolve));
  await gw?.close();
});

describe('the gateway in a supergraph, behind Hive Gateway', () => {
  it("answers our list with the other subgraph's field on it", async () => {
    const { body } = await ask('{ wallets(first: 10) { nodes { id restId label } } }');
    expect(body.errors).toBeUndefined();
    const nodes = (body.data as { wallets: { nodes: { id: string; label: string | null }[] } }).wallets.nodes;
    expect(nodes.map((n) => n.id)).toEqual(walletIds);
    expect(nodes.find((n) => n.id === walletIds[0])?.label).toBe('Payouts');
    expect(nodes.filter((n) => n.label === null)).toHaveLength(walletIds.length - 1);
    // The list once; the labels came from the other subgraph, for no REST call.
    expect(gw.upstreamCalls()).toEqual(['GET /external/v1/wallets?page=1&size=10']);
    // The router forwards the merchant's key to the wallets subgraph only.
    expect(labels.sawAuthorization ?? 0).toBe(0);
  });

  it("resolves the other subgraph's references in one _entities batch: one wallet list for several wallets, one call per deposit", async () => {
    const { body } = await ask(
      '{ favouriteWallets { id restId address } recentDeposits { id amount wallet { id } } }',
    );
    expect(body.errors).toBeUndefined();
    const data = body.data as { favouriteWallets: { id: string }[]; recentDeposits: { id: string }[] };
    expect(data.favouriteWallets.map((w) => w.id)).toEqual(labels.favouriteWallets);
    expect(data.recentDeposits.map((d) => d.id)).toEqual(labels.recentDeposits);
    const calls = gw.upstreamCalls();
    expect(calls.filter((c) => c.startsWith('GET /external/v1/wallets?'))).toHaveLength(1);
    expect(calls.filter((c) => /\/deposits\/[^?]+$/.test(c))).toHaveLength(labels.recentDeposits.length);
  });

  it('answers null for a reference that is not ours, not well formed, or another type', async () => {
    labels.favouriteWallets = [
      'V2FsbGV0OjAwMDAwMDAwLTAwMDAtNDAwMC04MDAwLTAwMDAwMDAwMDAwMA==',
      'nope',
      depositIds[0] as string,
    ];
    try {
      const { body } = await ask('{ favouriteWallets { id restId } }');
      // Non-null in the other subgraph's list: the router nulls what it cannot resolve with an error.
      expect(JSON.stringify(body)).not.toMatch(/restId":"[0-9a-f-]{36}/);
      const calls = gw.upstreamCalls();
      expect(calls.length).toBeLessThanOrEqual(1);
    } finally {
      labels.favouriteWallets = [walletIds[1] as string, walletIds[2] as string];
    }
  });

  it('_entities answers each reference as nodes(ids:) would: null for another type, a made-up id, a malformed one', async () => {
    const madeUp = Buffer.from('Wallet:00000000-0000-4000-8000-000000000000').toString('base64');
    const { body } = await gw.request(
      'query($r: [_Any!]!) { _entities(representations: $r) { __typename ... on Wallet { id } ... on Deposit { id } } }',
      {
        r: [
          { __typename: 'Wallet', id: walletIds[0] },
          { __typename: 'Wallet', id: depositIds[0] },
          { __typename: 'Wallet', id: madeUp },
          { __typename: 'Wallet', id: 'not a global id' },
          { __typename: 'Deposit', id: depositIds[0] },
        ],
      },
      { key },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      _entities: [
        { __typename: 'Wallet', id: walletIds[0] },
        null,
        null,
        null,
        { __typename: 'Deposit', id: depositIds[0] },
      ],
    });
  });

  it("a partial result reaches the router's client: the failing field null, its error with its code and path", async () => {
    await gw.sandbox.admin('POST', '/faults', { method: 'GET', path: '/external/v1/deposits', status: 503 });
    try {
      const { body } = await ask(
        '{ wallets(first: 10) { nodes { id label } } deposits(first: 2) { nodes { id } } }',
      );
      const data = body.data as { wallets: { nodes: { id: string }[] } | null; deposits: unknown };
      expect(data.wallets?.nodes.map((n) => n.id)).toEqual(walletIds);
      expect(data.deposits).toBeNull();
      expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      expect(body.errors?.[0]?.path).toEqual(['deposits']);
    } finally {
      await gw.sandbox.admin('DELETE', '/faults');
    }
  });

  it('answers a representation that is not one of our entities with null and BAD_USER_INPUT for that item alone', async () => {
    const { body } = await gw.request(
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Wallet { id } } }',
      {
        r: [
          { __typename: 'Wallet', id: walletIds[0] },
          'a string',
          { __typename: 'Query' },
          { __typename: 'x'.repeat(5000) },
        ],
      },
      { key },
    );
    expect((body.data as { _entities: unknown[] })._entities).toEqual([
      { id: walletIds[0] },
      null,
      null,
      null,
    ]);
    expect(body.errors?.map((e) => [e.extensions?.code, e.path])).toEqual([
      ['BAD_USER_INPUT', ['_entities', 1]],
      ['BAD_USER_INPUT', ['_entities', 2]],
      ['BAD_USER_INPUT', ['_entities', 3]],
    ]);
    // The echo of a long __typename is shortened.
    expect(body.errors?.[2]?.message.length).toBeLessThan(400);
  });

  it('counts each representation as nodes counts each id, defaults of variables included', async () => {
    // 1000 representations of one wallet, each selecting a window of 100 deposits: refused by cost.
    const many = Array.from({ length: 1000 }, () => ({ __typename: 'Wallet', id: walletIds[0] }));
    const heavy = await gw.request(
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Wallet { deposits(first: 100) { nodes { id amount status } } } } }',
      { r: many },
      { key },
    );
    expect(heavy.body.errors?.[0]?.extensions?.code).toBe('QUERY_LIMIT_EXCEEDED');
    expect(gw.upstreamCalls()).toEqual([]);
  });

  it("serves _service's SDL as schema/subgraph.graphql holds it; the plain schema carries no federation directive", async () => {
    const { readFile } = await import('node:fs/promises');
    const { printSchemaWithDirectives } = await import('@graphql-tools/utils');
    const { schema } = await import('../../../src/schema/index.ts');
    const file = await readFile(new URL('../../../schema/subgraph.graphql', import.meta.url), 'utf8');
    expect(`${await subgraphSdl(`${served.url}/graphql`, key)}\n`).toBe(file);
    expect(printSchemaWithDirectives(schema)).not.toMatch(/@key|@shareable|@link/);
  });

  it('without a key, the router client gets UNAUTHENTICATED with its code, and no REST data', async () => {
    const { body } = await ask('{ wallets(first: 1) { nodes { id label } } }', {}, null);
    expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(body.data?.wallets ?? null).toBeNull();
  });

  it('a keyed withdrawal through the router is created once; its replay answers the same intent', async () => {
    const wallet = walletIds[0] as string;
    const restWallet = (
      await gw.request(`{ node(id: "${wallet}") { ... on Wallet { restId } } }`, {}, { key })
    ).body.data as { node: { restId: string } };
    const input = withdrawalInput(restWallet.node.restId, { idempotencyKey: 'supergraph-1' });
    const mutation =
      'mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename ... on CreateWithdrawalIntentSuccess { withdrawalIntent { id restId } } } }';
    const first = await ask(mutation, { input });
    const second = await ask(mutation, { input });
    expect(first.body.errors).toBeUndefined();
    expect(second.body).toEqual(first.body);
    expect(gw.upstreamCalls().filter((c) => c.startsWith('POST'))).toHaveLength(1);
  });

  it('counts _entities against the cost limit, depth and aliases as it counts nodes: refused before any REST call', async () => {
    const heavy = await gw.request(
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Wallet { deposits(first: 1000) { nodes { wallet { deposits(first: 1000) { nodes { id } } } } } } } }',
      { r: [{ __typename: 'Wallet', id: walletIds[0] }] },
      { key },
    );
    expect(heavy.body.errors?.[0]?.extensions?.code).toBe('QUERY_LIMIT_EXCEEDED');
    expect(heavy.body.errors?.[0]?.extensions?.cost).toBeGreaterThan(
      heavy.body.errors?.[0]?.extensions?.maxCost as number,
    );
    const deep = await gw.request(
      `query($r: [_Any!]!) { _entities(representations: $r) { ... on Deposit { ${'wallet { deposits(first: 1) { nodes { '.repeat(6)}id${' } } }'.repeat(6)} } } }`,
      { r: [{ __typename: 'Deposit', id: depositIds[0] }] },
      { key },
    );
    expect(deep.body.errors?.[0]?.extensions?.code).toBe('QUERY_LIMIT_EXCEEDED');
    expect(gw.upstreamCalls()).toEqual([]);
  });

  it('bounds the representations of one request: past 1000 refused before any REST call; 10,000 do not even fit in a request', async () => {
    // The shortest representations: 1001 fit in MAX_REQUEST_BYTES (100 kB), and are too many.
    const short = Array.from({ length: 1001 }, () => ({ __typename: 'Wallet', id: 'x' }));
    const many = await gw.request(
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Wallet { id } } }',
      { r: short },
      { key },
    );
    expect(many.body.errors?.[0]?.extensions).toMatchObject({
      code: 'QUERY_LIMIT_EXCEEDED',
      representations: 1001,
      maxRepresentations: 1000,
    });
    // Aliases count together.
    const half = short.slice(0, 600);
    const aliased = await gw.request(
      'query($a: [_Any!]!, $b: [_Any!]!) { a: _entities(representations: $a) { __typename } b: _entities(representations: $b) { __typename } }',
      { a: half, b: half },
      { key },
    );
    expect(aliased.body.errors?.[0]?.extensions?.code).toBe('QUERY_LIMIT_EXCEEDED');
    expect(gw.upstreamCalls()).toEqual([]);
    // Through the router: another subgraph handing out 10,000 references gets an error for them,
    // and the gateway makes no REST call.
    const before = labels.favouriteWallets;
    // Distinct ids (a router sends each representation once).
    labels.favouriteWallets = Array.from({ length: 10_000 }, (_, i) =>
      Buffer.from(`Wallet:00000000-0000-4000-8000-${String(i).padStart(12, '0')}`).toString('base64'),
    );
    try {
      const { body } = await ask('{ favouriteWallets { id restId } }');
      expect(body.errors?.length ?? 0).toBeGreaterThan(0);
      expect(JSON.stringify(body)).not.toMatch(/restId":"[0-9a-f-]{36}/);
      expect(gw.upstreamCalls()).toEqual([]);
    } finally {
      labels.favouriteWallets = before;
    }
  });
  it('carries a subscription (last: its poll goes on a little after it ends): the router subscribes to ours over SSE and relays each status', async () => {
    const restWallet = (
      await gw.request(`{ node(id: "${walletIds[1]}") { ... on Wallet { restId } } }`, {}, { key })
    ).body.data as { node: { restId: string } };
    const created = await gw.request(
      'mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { ... on CreateWithdrawalIntentSuccess { withdrawalIntent { id restId status } } } }',
      { input: withdrawalInput(restWallet.node.restId) },
      { key },
    );
    const intent = (
      created.body.data as { createWithdrawalIntent: { withdrawalIntent: { id: string; restId: string } } }
    ).createWithdrawalIntent.withdrawalIntent;
    const abort = new AbortController();
    const response = await fetch(router.url, {
      method: 'POST',
      signal: abort.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${key}`,
      },
      body: JSON.stringify({
        query: 'subscription($id: ID!) { withdrawalIntentUpdated(id: $id) { id status } }',
        variables: { id: intent.id },
      }),
    });
    expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    const statuses: string[] = [];
    let text = '';
    let moved = false;
    try {
      while (!statuses.includes('REVIEWING')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        for (const match of text.matchAll(/"status":"([A-Z_]+)"/g)) statuses.push(match[1] as string);
        text = text.slice(text.lastIndexOf('\n'));
        if (!moved && statuses.length > 0) {
          moved = true;
          await gw.sandbox.world.transitionWithdrawal(intent.restId, 'reviewing');
        }
      }
    } finally {
      abort.abort();
    }
    expect(statuses[0]).toBe('PREPARING');
    expect(statuses).toContain('REVIEWING');
  });
});
