import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';

interface AccessLine {
  level: number;
  msg: string;
  requestId: string;
  method: string;
  path: string;
  status: number;
  durationMs: number;
  operationName?: string | null;
  operationType?: string | null;
  outcome?: string;
  errorCodes?: string[];
  upstreamCalls?: number;
  cacheHits?: number;
  coalesced?: number;
  client: { name: string | null; version: string | null };
}

let gw: TestGateway;
let acme: { id: string; key: string };

beforeAll(async () => {
  // The micro-cache on, so that a cache hit can be seen.
  gw = await startTestGateway({ upstream: { cacheTtlMs: 60_000 } });
  acme = await gw.sandbox.world.merchant();
});
afterAll(() => gw.close());

function lineOf(response: { headers: Headers }): AccessLine {
  const id = response.headers.get('x-request-id');
  const lines = gw.logs
    .map((l) => JSON.parse(l) as AccessLine)
    .filter((l) => l.msg === 'request' && l.requestId === id);
  expect(lines).toHaveLength(1);
  return lines[0] as AccessLine;
}

describe('access log', () => {
  it('one info line per request: id, operation, client, status, duration, codes, upstream calls', async () => {
    const response = await gw.request(
      'query Wallets { wallets(first: 3) { nodes { id } } }',
      {},
      {
        key: acme.key,
        headers: { 'graphql-client-name': 'merchant-ios', 'apollographql-client-version': '4.2.0' },
      },
    );
    const line = lineOf(response);
    expect(line).toMatchObject({
      level: 30,
      method: 'POST',
      path: '/graphql',
      status: 200,
      operationName: 'Wallets',
      operationType: 'query',
      outcome: 'success',
      errorCodes: [],
      upstreamCalls: 1,
      cacheHits: 0,
      coalesced: 0,
      sharedResult: null,
      client: { name: 'merchant-ios', version: '4.2.0' },
    });
    expect(line.durationMs).toBeGreaterThan(0);
    expect(line.durationMs).toBeLessThan(10_000);
    expect(JSON.stringify(line)).not.toContain(acme.key);
  });

  it('counts reads answered from the micro-cache, and says when a kept result answered', async () => {
    const query = 'query Cached { wallets(first: 4) { totalCount } }';
    const first = await gw.request(query, {}, { key: acme.key });
    expect(lineOf(first)).toMatchObject({ upstreamCalls: 1, cacheHits: 0, sharedResult: null });
    // Another query over the same REST read: executed, its read answered by the micro-cache.
    const other = await gw.request(
      'query Other { wallets(first: 4) { nodes { id } } }',
      {},
      { key: acme.key },
    );
    expect(lineOf(other)).toMatchObject({ upstreamCalls: 0, cacheHits: 1, sharedResult: null });
    // The same query again: not executed at all (query deduplication kept the first one's result).
    const again = await gw.request(query, {}, { key: acme.key });
    expect(lineOf(again)).toMatchObject({ upstreamCalls: 0, cacheHits: 0, sharedResult: 'kept' });
    expect(again.body).toEqual(first.body);
  });

  it('logs a 401 with its code', async () => {
    const response = await gw.request(
      'query Wallets { wallets(first: 3) { nodes { id } } }',
      {},
      { key: null },
    );
    expect(lineOf(response)).toMatchObject({
      status: 401,
      operationName: 'Wallets',
      outcome: 'error',
      errorCodes: ['UNAUTHENTICATED'],
      upstreamCalls: 0,
      client: { name: null, version: null },
    });
  });

  it('logs a request refused before GraphQL, without its query string', async () => {
    const response = await gw.request('{ __typename }', {}, { path: '/graphql?api_key=leaked-secret-1' });
    const line = lineOf(response);
    expect(line).toMatchObject({ status: 400, path: '/graphql', errorCodes: ['API_KEY_IN_URL'] });
    expect(gw.logs.join('\n')).not.toContain('leaked-secret-1');
  });

  it('logs the operation a document that failed validation names', async () => {
    const response = await gw.request('query Broken { nope }', {}, { key: acme.key });
    expect(lineOf(response)).toMatchObject({
      operationName: 'Broken',
      operationType: 'query',
      errorCodes: ['GRAPHQL_VALIDATION_FAILED'],
    });
  });

  it('logs probes at debug, so orchestrators do not flood the log', async () => {
    const response = await gw.gateway.fetch('http://gateway.test/healthz');
    expect(lineOf(response)).toMatchObject({ level: 20, path: '/healthz', status: 200 });
    expect(lineOf(response).operationName).toBeUndefined();
  });

  it('forwards the caller’s X-Request-Id upstream, and answers with it', async () => {
    gw.resetCalls();
    const response = await gw.request(
      '{ deposits(first: 1) { totalCount } }',
      {},
      { key: acme.key, headers: { 'x-request-id': 'checkout-42' } },
    );
    expect(response.headers.get('x-request-id')).toBe('checkout-42');
    expect(gw.sandbox.sandbox.requests.map((r) => r.requestId)).toEqual(['checkout-42']);
    expect(lineOf(response).requestId).toBe('checkout-42');
  });
});
