import { readdirSync, readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { operationCost } from '../../../src/execution/operation-cost.ts';
import { schema } from '../../../src/schema/index.ts';
import { DEFAULTS, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { subscribeSSE } from '../../support/subscriptions.ts';

let gw: TestGateway;
let key: string;
let walletId: string;

beforeAll(async () => {
  gw = await startTestGateway();
  const merchant = await gw.sandbox.world.merchant();
  key = merchant.key;
  walletId = (await gw.sandbox.world.wallet(merchant.id)).id;
  await gw.sandbox.world.deposit(walletId, { amount: '5' });
});
beforeEach(() => gw.resetCalls());
afterAll(() => gw.close());

async function refused(query: string, variables: Record<string, unknown> = {}) {
  const response = await gw.request(query, variables, { key });
  expect(response.status).toBe(400);
  expect(response.body.errors?.[0]?.extensions?.code).toBe('QUERY_LIMIT_EXCEEDED');
  expect(gw.upstreamCalls()).toEqual([]);
  // The limits are checked inside the parser, but a document over them has no syntax error.
  expect(response.body.errors?.[0]?.message).not.toMatch(/^Syntax Error/);
  return response.body.errors?.[0];
}

describe('hostile documents are refused before any upstream call', () => {
  it('depth', async () => {
    // deposits > nodes > wallet, four times over: depth 13.
    let selection = 'address';
    for (let i = 0; i < 4; i++) selection = `deposits(first: 1) { nodes { wallet { ${selection} } } }`;
    const error = await refused(`{ ${selection} }`);
    expect(error.message).toMatch(/depth/i);
  });

  it('aliases', async () => {
    const fields = Array.from({ length: 21 }, (_, i) => `a${i}: wallets(first: 1) { totalCount }`).join(' ');
    const error = await refused(`{ ${fields} }`);
    expect(error.message).toMatch(/alias/i);
  });

  it('tokens', async () => {
    const fields = Array.from({ length: 3_100 }, () => 'address').join(' ');
    await refused(`{ wallets(first: 1) { nodes { ${fields} } } }`);
  });

  it('directives', async () => {
    const fields = Array.from({ length: 21 }, () => '__typename @include(if: true)').join(' ');
    await refused(`{ ${fields} wallets(first: 1) { totalCount } }`);
  });

  it('cost, with connections weighted by first/last (variables included)', async () => {
    const error = await refused(
      'query($n: Int!) { deposits(first: $n) { nodes { wallet { deposits(first: $n) { nodes { id amount } } } } } }',
      { n: 1000 },
    );
    expect(error.message).toMatch(/cost \d+ exceeds the limit of 20000/);
    expect(error.extensions).toMatchObject({ maxCost: 20_000 });
  });

  it('cost, counted again for each request: other variables, another operation of the same document', async () => {
    const nested =
      'query($n: Int!) { deposits(first: $n) { nodes { wallet { deposits(first: $n) { nodes { id } } } } } }';
    const small = await gw.request(nested, { n: 1 }, { key });
    expect(small.body.errors).toBeUndefined();
    gw.resetCalls();
    await refused(nested, { n: 1000 });

    const document =
      'query Small { deposits(first: 1) { nodes { id } } } query Big { deposits(first: 1000) { nodes { wallet { deposits(first: 1000) { nodes { id } } } } } }';
    for (let i = 0; i < 2; i++) {
      const passed = await gw.gateway.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query: document, operationName: 'Small' }),
      });
      expect(passed.status).toBe(200);
      gw.resetCalls();
      const big = await gw.gateway.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query: document, operationName: 'Big' }),
      });
      expect(big.status).toBe(400);
      expect(
        ((await big.json()) as { errors: { extensions: { code: string } }[] }).errors[0]?.extensions.code,
      ).toBe('QUERY_LIMIT_EXCEEDED');
      expect(gw.upstreamCalls()).toEqual([]);
    }
  });

  it('batched operations', async () => {
    const response = await gw.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify([{ query: '{ wallets(first: 1) { totalCount } }' }, { query: '{ __typename }' }]),
    });
    expect(response.status).toBe(400);
    expect(gw.upstreamCalls()).toEqual([]);
  });

  it('malformed JSON', async () => {
    const response = await gw.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: '{"query": "{ wallets(first: 1) { totalCount } }"',
    });
    expect(response.status).toBe(400);
    expect(gw.upstreamCalls()).toEqual([]);
  });

  it('request bodies over the size cap (413)', async () => {
    const response = await gw.request(
      `{ wallets(first: 1) { totalCount } } # ${'x'.repeat(120_000)}`,
      {},
      { key },
    );
    expect(response.status).toBe(413);
    expect(response.body.errors?.[0]?.extensions).toEqual({ code: 'REQUEST_TOO_LARGE' });
    expect(gw.upstreamCalls()).toEqual([]);
  });

  it('chunked request bodies (no Content-Length) over the size cap (413), counted while read', async () => {
    const chunked = (text: string) => {
      const bytes = new TextEncoder().encode(text);
      return gw.gateway.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: new ReadableStream({
          start(controller) {
            // Several chunks, as a chunked upload arrives.
            for (let i = 0; i < bytes.length; i += 16_384) controller.enqueue(bytes.subarray(i, i + 16_384));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
    };
    const query = '{ wallets(first: 1) { totalCount } }';
    const large = await chunked(JSON.stringify({ query: `${query} # ${'x'.repeat(120_000)}` }));
    expect(large.status).toBe(413);
    expect((await large.json()).errors).toEqual([
      {
        message: 'Request bodies are limited to 100000 bytes; the chunked body went past it.',
        extensions: { code: 'REQUEST_TOO_LARGE' },
      },
    ]);
    expect(gw.upstreamCalls()).toEqual([]);

    const small = await chunked(JSON.stringify({ query }));
    expect(small.status).toBe(200);
    expect(await small.json()).toEqual({ data: { wallets: { totalCount: 1 } } });
  });
});

describe('realistic documents pass', () => {
  it('every example operation and the largest realistic screen', async () => {
    const dir = new URL('../../../schema/operations/', import.meta.url);
    for (const name of readdirSync(dir)) {
      const query = readFileSync(new URL(name, dir), 'utf8');
      if (query.includes('subscription ')) {
        // A stream: the depth, alias and token limits are validation, passed once the stream
        // opens; the cost check runs at subscribe and would be its first event, so it is
        // computed here directly.
        const stream = await subscribeSSE(gw.gateway, query, { intentId: 'wi_1' }, key);
        expect(stream.status).toBe(200);
        stream.close();
        expect(operationCost(schema, parse(query), undefined, {})).toBeLessThanOrEqual(
          DEFAULTS.queryLimits.maxCost,
        );
        continue;
      }
      if (query.includes('@defer')) {
        // Answered incrementally: multipart/mixed, read as text.
        const deferred = await gw.gateway.fetch('http://gateway.test/graphql', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'multipart/mixed',
            authorization: `Bearer ${key}`,
          },
          body: JSON.stringify({ query, variables: { id: walletId } }),
        });
        const text = await deferred.text();
        expect(text).toContain('"wallet":{');
        expect(text).not.toContain('QUERY_LIMIT_EXCEEDED');
        continue;
      }
      const response = await gw.request(query, { id: walletId, input: null }, { key });
      expect(
        response.body.errors?.map((e: { extensions?: { code?: string } }) => e.extensions?.code) ?? [],
      ).not.toContain('QUERY_LIMIT_EXCEEDED');
    }
    gw.resetCalls();
    const screen = await gw.request(
      `{ wallets(first: 20) { totalCount nodes { id restId address status createdAt
          assets { currencyCode nickname balance { availableAmount lockedAmount } }
          deposits(first: 10) { totalCount pageInfo { hasNextPage endCursor } nodes { id status amount amountFee amountNet currencyCode createdAt transaction { hash legs { type amount currencyCode } } } }
          withdrawalIntents(first: 10) { totalCount nodes { id status amount amountGross amountFee amountNet destination { identifier } createdAt } } } }
        deposits(first: 50) { nodes { id amount status wallet { address } } } }`,
      {},
      { key },
    );
    expect(screen.status).toBe(200);
    expect(screen.body.errors).toBeUndefined();
    // Well inside the default budget of upstream calls (MAX_UPSTREAM_CALLS_PER_REQUEST).
    expect(gw.upstreamCalls().length).toBeLessThanOrEqual(5);
    expect(DEFAULTS.maxUpstreamCallsPerRequest).toBeGreaterThanOrEqual(20 * gw.upstreamCalls().length);
  });
});

describe('browsers and production', () => {
  it('protects against CSRF: a simple request without a Bearer key needs a custom header', async () => {
    const url = `http://gateway.test/graphql?query=${encodeURIComponent('{ wallets(first: 1) { totalCount } }')}`;
    // What a cross-site page can send without a preflight: no key, or the Basic credentials a
    // browser adds by itself.
    for (const headers of [{}, { authorization: 'Basic dXNlcjpwYXNz' }, { authorization: 'Bearer' }]) {
      const bare = await gw.gateway.fetch(url, { headers });
      expect(bare.status).toBe(403);
      const [error] = (await bare.json()).errors;
      expect(error.extensions.code).toBe('CSRF_HEADER_REQUIRED');
      // Whoever forgot the key (GraphiQL without its header, urql's GET) is told about the key first.
      expect(error.message).toMatch(/^Send Authorization: Bearer <API key>\. .*x-graphql-csrf/);
      const form = await gw.gateway.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'text/plain', ...headers },
        body: JSON.stringify({ query: '{ wallets(first: 1) { totalCount } }' }),
      });
      expect(form.status).toBe(403);
    }
    expect(gw.upstreamCalls()).toEqual([]);
    const withHeader = await gw.gateway.fetch(url, {
      headers: { authorization: `Bearer ${key}`, 'x-graphql-csrf': '1', accept: 'application/json' },
    });
    expect(withHeader.status).toBe(200);
    expect(await withHeader.json()).toEqual({ data: { wallets: { totalCount: 1 } } });
  });

  it('answers a GET with a Bearer key as GraphiQL, urql and Apollo send it (a browser preflights that header)', async () => {
    const query = '{ wallets(first: 1) { totalCount } }';
    const get = await gw.gateway.fetch(`http://gateway.test/graphql?query=${encodeURIComponent(query)}`, {
      headers: { authorization: `Bearer ${key}`, accept: 'application/graphql-response+json' },
    });
    expect(get.status).toBe(200);
    expect(await get.json()).toEqual({ data: { wallets: { totalCount: 1 } } });
    // GraphiQL's subscription tab: a GET asking for an event stream.
    const controller = new AbortController();
    const stream = await gw.gateway.fetch(
      `http://gateway.test/graphql?query=${encodeURIComponent('subscription { withdrawalIntentsUpdated { id } }')}`,
      {
        headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
        signal: controller.signal,
      },
    );
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    controller.abort();
    await stream.body?.cancel().catch(() => {});
  });

  it('turns introspection and field suggestions off when configured', async () => {
    const closed = await startTestGateway({ config: { introspection: false, graphiql: false } });
    try {
      const merchant = await closed.sandbox.world.merchant();
      const introspection = await closed.request(
        '{ __schema { types { name } } }',
        {},
        { key: merchant.key },
      );
      expect(introspection.body.errors?.[0]).toMatchObject({
        message:
          'GraphQL introspection has been disabled, but the requested query contained the field "__schema".',
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
      });
      const typo = await closed.request('{ walets(first: 1) { totalCount } }', {}, { key: merchant.key });
      expect(JSON.stringify(typo.body)).not.toMatch(/Did you mean/);
      const open = await gw.request('{ walets(first: 1) { totalCount } }', {}, { key });
      expect(JSON.stringify(open.body)).toMatch(/Did you mean/);
    } finally {
      await closed.close();
    }
  });
});
