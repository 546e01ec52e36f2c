import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WalletScreenDeferredDocument } from '../../generated/graphql.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { parseMetrics, sampleSum } from '../../support/metrics.ts';

// @defer over multipart/mixed and SSE: the wallet screen's balances come in the first payload,
// its deposits and withdrawals (a scan of the merchant's lists) in a later one.

const SCREEN = print(WalletScreenDeferredDocument);

let gw: TestGateway;
let key: string;
let walletId: string;

beforeAll(async () => {
  gw = await startTestGateway();
  const m = await gw.sandbox.world.merchant();
  key = m.key;
  walletId = (await gw.sandbox.world.wallet(m.id, { USDT: '50', TRX: '1' })).id;
  await gw.sandbox.world.deposit(walletId, { amount: '5' });
});
afterAll(() => gw.close());

interface Payload {
  data?: Record<string, unknown>;
  incremental?: {
    data: Record<string, unknown>;
    path: (string | number)[];
    label?: string;
    errors?: { extensions: { code: string } }[];
  }[];
  errors?: { extensions: { code: string } }[];
  hasNext?: boolean;
}

async function multipart(on: TestGateway, query: string, variables: Record<string, unknown>, withKey = key) {
  const response = await on.gateway.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'multipart/mixed',
      authorization: `Bearer ${withKey}`,
    },
    body: JSON.stringify({ query, variables }),
  });
  const boundary = /boundary="?([^";]+)"?/.exec(response.headers.get('content-type') ?? '')?.[1];
  const text = await response.text();
  const parts = boundary
    ? text
        .split(`--${boundary}`)
        .map((part) => part.split('\r\n\r\n')[1]?.trim())
        .filter((body): body is string => Boolean(body))
        .map((body) => JSON.parse(body) as Payload)
    : [];
  return { status: response.status, contentType: response.headers.get('content-type'), parts, text };
}

describe('@defer', () => {
  it('multipart/mixed: the wallet and its balances first, its activity in a later part', async () => {
    gw.resetCalls();
    const { status, contentType, parts } = await multipart(gw, SCREEN, { id: walletId });
    expect(status).toBe(200);
    expect(contentType).toMatch(/^multipart\/mixed/);
    expect(parts.length).toBeGreaterThanOrEqual(2);
    const [first, ...rest] = parts;
    expect(first?.hasNext).toBe(true);
    expect(first?.data?.wallet).toMatchObject({
      assets: expect.arrayContaining([expect.objectContaining({ currencyCode: 'USDT' })]),
    });
    expect(first?.data?.wallet).not.toHaveProperty('deposits');
    const incremental = rest.flatMap((p) => p.incremental ?? []);
    expect(incremental).toEqual([
      expect.objectContaining({
        label: 'activity',
        path: ['wallet'],
        data: {
          deposits: { nodes: [expect.objectContaining({ amount: expect.stringMatching(/^5(\.0+)?$/) })] },
          withdrawalIntents: { nodes: [] },
        },
      }),
    ]);
    expect(rest.at(-1)?.hasNext).toBe(false);
    // The same three REST calls as the undeferred screen: the wallet, one page of each list.
    expect(gw.upstreamCalls().map((c) => c.split('?')[0])).toEqual([
      expect.stringMatching(/^GET \/external\/v1\/wallets\//),
      'GET /external/v1/deposits',
      'GET /external/v1/withdrawal-intents',
    ]);
  });

  it('text/event-stream: the same payloads as events, then complete', async () => {
    const response = await gw.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${key}`,
      },
      body: JSON.stringify({ query: SCREEN, variables: { id: walletId } }),
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await response.text())
      .split('\n\n')
      .filter((block) => block.includes('data:'))
      .map((block) => ({
        event: /^event: (\w+)/m.exec(block)?.[1],
        data: /^data: (.*)$/m.exec(block)?.[1] ?? '',
      }));
    const next = events.filter((e) => e.event === 'next').map((e) => JSON.parse(e.data) as Payload);
    expect(next[0]?.data?.wallet).toBeDefined();
    expect(next.flatMap((p) => p.incremental ?? []).map((i) => i.label)).toEqual(['activity']);
    expect(events.at(-1)?.event).toBe('complete');
  });

  it('is never shared by query deduplication: each deferred request executes on its own', async () => {
    const before = sampleSum(
      parseMetrics((await gw.metrics.scrape()).body),
      'gateway_graphql_deduplicated_total',
    );
    await gw.sandbox.admin('POST', '/faults', {
      method: 'GET',
      path: '/external/v1/wallets/',
      latencyMs: 100,
      times: 1,
    });
    const answers = await Promise.all([1, 2, 3].map(() => multipart(gw, SCREEN, { id: walletId })));
    for (const answer of answers) expect(answer.parts.flatMap((p) => p.incremental ?? [])).toHaveLength(1);
    const after = sampleSum(
      parseMetrics((await gw.metrics.scrape()).body),
      'gateway_graphql_deduplicated_total',
    );
    expect(after - before).toBe(0);
  });

  it('spends the same upstream-call budget: a deferred field past it fails in its own payload', async () => {
    const budgeted = await startTestGateway({ config: { maxUpstreamCallsPerRequest: 2 } });
    try {
      const m = await budgeted.sandbox.world.merchant();
      const wallet = await budgeted.sandbox.world.wallet(m.id);
      const { parts } = await multipart(budgeted, SCREEN, { id: wallet.id }, m.key);
      expect(parts[0]?.data?.wallet).toBeDefined();
      expect(parts[0]?.errors, JSON.stringify(parts)).toBeUndefined();
      const incremental = parts.flatMap((p) => p.incremental ?? []);
      const codes = incremental.flatMap((i) => i.errors ?? []).map((e) => e.extensions.code);
      expect(codes).toEqual(['QUERY_LIMIT_EXCEEDED']);
      expect(budgeted.upstreamCalls()).toHaveLength(2);
    } finally {
      await budgeted.close();
    }
  });

  it('validates documents that use @defer or @stream with the plugin’s rules', async () => {
    const answer = await gw.request(
      `{ wallet(id: "${walletId}") @stream { id } }`,
      {},
      { key, headers: { accept: 'application/graphql-response+json' } },
    );
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(answer.body.errors?.[0]?.message).toMatch(/list/i);
  });

  it('counts deferred selections in the cost limit, and refuses before any call', async () => {
    gw.resetCalls();
    const costly = `query { wallet(id: "${walletId}") { id ... @defer { deposits(first: 1000) { nodes { wallet { deposits(first: 1000) { nodes { id } } } } } } } }`;
    const response = await gw.request(
      costly,
      {},
      { key, headers: { accept: 'multipart/mixed, application/graphql-response+json' } },
    );
    expect(response.status).toBe(400);
    expect(response.body.errors?.map((e: { extensions: { code: string } }) => e.extensions.code)).toEqual([
      'QUERY_LIMIT_EXCEEDED',
    ]);
    expect(gw.upstreamCalls()).toEqual([]);
  });
});

describe('a stream the client cannot take (accept without multipart/mixed or text/event-stream)', () => {
  const post = (query: string) =>
    gw.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        authorization: `Bearer ${key}`,
      },
      body: JSON.stringify({ query }),
    });

  it('a query whose @defer is turned off by its variable is answered as one JSON result', async () => {
    const response = await gw.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        authorization: `Bearer ${key}`,
      },
      body: JSON.stringify({
        query: 'query($d: Boolean!) { wallets(first: 1) { nodes { id } ... @defer(if: $d) { totalCount } } }',
        variables: { d: false },
      }),
    });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.errors).toBeUndefined();
    expect(body.data.wallets.totalCount).toBeGreaterThan(0);
  });

  it('a deferred query is answered 406 before anything runs: no REST call', async () => {
    gw.resetCalls();
    const response = await post(
      `{ wallets(first: 1) { nodes { id } } ... @defer { deposits(first: 7) { nodes { id } } } }`,
    );
    expect(response.status).toBe(406);
    await response.text();
    for (let i = 0; i < 20; i++) await new Promise(setImmediate);
    expect(gw.upstreamCalls()).toEqual([]);
  });
});
