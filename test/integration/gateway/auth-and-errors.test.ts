import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { closeWithoutLeaks } from '../../support/leaks.ts';

let gw: TestGateway;
let acme: { id: string; key: string; readOnlyKey: string };
let globex: { id: string; key: string; readOnlyKey: string };

// No socket, server or timer may outlive this file, and no call or timer its request.
closeWithoutLeaks(() => gw);
beforeAll(async () => {
  gw = await startTestGateway();
  acme = await gw.sandbox.world.merchant();
  globex = await gw.sandbox.world.merchant();
  for (const m of [acme, globex]) {
    const wallet = await gw.sandbox.world.wallet(m.id);
    for (let i = 0; i < 5; i++) await gw.sandbox.world.deposit(wallet.id, { amount: `${i + 1}` });
  }
});
beforeEach(() => gw.resetCalls());

const WALLETS = '{ wallets(first: 5) { nodes { restId } } }';

describe('authentication passthrough', () => {
  it('answers a missing or malformed Authorization with HTTP 401 and no upstream call', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Basic abc' },
      { authorization: 'Bearer' },
      { authorization: 'Bearer a b' },
    ]) {
      const response = await gw.request(WALLETS, {}, { headers });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({
        data: null,
        errors: [
          {
            message: 'A valid API key is required: send Authorization: Bearer <API key>.',
            extensions: { code: 'UNAUTHENTICATED' },
          },
        ],
      });
    }
    expect(gw.upstreamCalls()).toEqual([]);
  });

  it('lets introspection through without a key', async () => {
    const response = await gw.request('{ __schema { queryType { name } } }');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
  });

  it('forwards the key unchanged: the upstream sees the caller as its merchant', async () => {
    await gw.request(WALLETS, {}, { key: acme.key });
    await gw.request(WALLETS, {}, { key: globex.key });
    expect(gw.sandbox.sandbox.requests.map((r) => r.merchantId)).toEqual([acme.id, globex.id]);
  });

  it('answers a key the REST API refuses in the shape of a missing key: data null, one error, HTTP 401', async () => {
    const refused = {
      data: null,
      errors: [
        {
          message: 'The API key was not accepted.',
          extensions: { code: 'UNAUTHENTICATED', upstream: { status: 401, code: 'unauthorized' } },
        },
      ],
    };
    // One root field, several, and the mutation: always the one shape, never `wallets: null` and
    // an error per field.
    for (const [query, variables] of [
      [WALLETS, {}],
      ['{ wallets(first: 1) { totalCount } deposits(first: 1) { totalCount } __typename }', {}],
      [
        'mutation ($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename } }',
        {
          input: {
            walletId: '00000000-0000-4000-8000-000000000000',
            serviceFeeMode: 'EXCLUSIVE',
            currencyCode: 'USDT',
            amount: '1.00',
            destination: { type: 'crypto', rail: 'tron', identifier: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7' },
          },
        },
      ],
    ] as const) {
      for (const accept of ['application/json', 'application/graphql-response+json']) {
        const response = await gw.request(query, variables, {
          key: 'mw_sandbox_not_a_real_key',
          headers: { accept },
        });
        expect(response.status).toBe(401);
        expect(response.body).toEqual(refused);
      }
    }
  });

  it('refuses an API key in the URL before anything else, and never logs it', async () => {
    const response = await gw.gateway.fetch(`http://gateway.test/graphql?api_key=${acme.key}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${acme.key}` },
      body: JSON.stringify({ query: WALLETS }),
    });
    expect(response.status).toBe(400);
    expect(response.statusText).toBe('Bad Request');
    const body = await response.json();
    expect(body.errors[0].extensions).toEqual({ code: 'API_KEY_IN_URL' });
    expect(gw.upstreamCalls()).toEqual([]);
    // On every path, /metrics included (answered on this port when METRICS_PORT is unset).
    const metrics = await gw.gateway.fetch(`http://gateway.test/metrics?api_key=${acme.key}`);
    expect(metrics.status).toBe(400);
    expect((await metrics.json()).errors[0].extensions).toEqual({ code: 'API_KEY_IN_URL' });
    expect(gw.logs.join('\n')).not.toContain(acme.key);
  });

  it('never mixes two merchants under concurrent load', async () => {
    const query =
      '{ wallets(first: 5) { nodes { restId deposits(first: 5) { nodes { walletRestId } } } } deposits(first: 10) { nodes { wallet { restId } } } }';
    const own = async (key: string) => {
      const { body } = await gw.request(query, {}, { key });
      return body.data as {
        wallets: { nodes: { restId: string; deposits: { nodes: { walletRestId: string }[] } }[] };
        deposits: { nodes: { wallet: { restId: string } }[] };
      };
    };
    const expected = {
      acme: (await own(acme.key)).wallets.nodes[0]?.restId,
      globex: (await own(globex.key)).wallets.nodes[0]?.restId,
    };
    const results = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const who = i % 2 ? ('globex' as const) : ('acme' as const);
        return { who, data: await own(who === 'acme' ? acme.key : globex.key) };
      }),
    );
    for (const { who, data } of results) {
      const mine = expected[who];
      expect(data.wallets.nodes.map((w) => w.restId)).toEqual([mine]);
      for (const d of data.wallets.nodes[0]?.deposits.nodes ?? []) expect(d.walletRestId).toBe(mine);
      for (const d of data.deposits.nodes) expect(d.wallet.restId).toBe(mine);
    }
  });
});

describe('error mapping', () => {
  const fault = (body: Record<string, unknown>) => gw.sandbox.admin('POST', '/faults', body);
  const depositsError = async () => {
    const response = await gw.request(
      '{ wallets(first: 1) { totalCount } deposits(first: 1) { totalCount } }',
      {},
      { key: acme.key },
    );
    return response;
  };

  it('keeps partial data: one failing field does not fail its siblings', async () => {
    await fault({ method: 'GET', path: '/external/v1/deposits', status: 500 });
    const { status, body } = await depositsError();
    expect(status).toBe(200);
    // The wallets fetched beside the failing deposits are kept (the connections are nullable).
    expect(body.data).toEqual({ wallets: { totalCount: 1 }, deposits: null });
    expect(body.errors).toEqual([
      {
        message: 'The REST API failed to answer the request.',
        locations: [{ line: 1, column: 36 }],
        path: ['deposits'],
        extensions: { code: 'UPSTREAM_ERROR', upstream: { status: 500, code: 'fault_injected' } },
      },
    ]);
    // A failing nullable field becomes null beside its siblings' data.
    await gw.sandbox.admin('DELETE', '/faults');
    await fault({ method: 'GET', path: '/external/v1/deposits/', status: 500 });
    const partial = await gw.request(
      `{ wallets(first: 1) { totalCount } deposit(id: "00000000-0000-4000-8000-000000000001") { id } }`,
      {},
      { key: acme.key },
    );
    expect(partial.status).toBe(200);
    expect(partial.body.data).toEqual({ wallets: { totalCount: 1 }, deposit: null });
    expect(partial.body.errors).toHaveLength(1);
    expect(partial.body.errors?.[0]).toMatchObject({
      path: ['deposit'],
      extensions: { code: 'UPSTREAM_ERROR' },
    });
  });

  it.each([
    [502, 'UPSTREAM_UNAVAILABLE'],
    [503, 'UPSTREAM_UNAVAILABLE'],
    [504, 'UPSTREAM_TIMEOUT'],
    [429, 'RATE_LIMITED'],
    [403, 'FORBIDDEN'],
  ])('maps a persistent upstream %i to %s, after bounded retries for 502/503/504', async (status, code) => {
    await fault({ method: 'GET', path: '/external/v1/deposits', status });
    const { body } = await depositsError();
    expect(body.errors?.[0]?.extensions).toMatchObject({ code, upstream: { status } });
    const attempts = gw.upstreamCalls().filter((c) => c.startsWith('GET /external/v1/deposits'));
    expect(attempts).toHaveLength([502, 503, 504].includes(status) ? 3 : 1);
  });

  it('answers HTTP 403 when FORBIDDEN fails the whole operation', async () => {
    await fault({
      method: 'GET',
      path: '/external/v1/wallets',
      status: 403,
      body: '{"code":"forbidden","message":"Forbidden.","data":null}',
    });
    const response = await gw.request(WALLETS, {}, { key: acme.key });
    expect(response.status).toBe(403);
    expect(response.body.errors?.[0]?.extensions).toEqual({
      code: 'FORBIDDEN',
      upstream: { status: 403, code: 'forbidden' },
    });
  });

  it('retries a GET after a transient 503 or a connection reset, then succeeds', async () => {
    await fault({ method: 'GET', path: '/external/v1/deposits', status: 503, times: 1 });
    await fault({ method: 'GET', path: '/external/v1/wallets', reset: true, times: 1 });
    const { body } = await depositsError();
    expect(body).toEqual({ data: { wallets: { totalCount: 1 }, deposits: { totalCount: 5 } } });
    expect(gw.upstreamCalls().sort()).toEqual(
      [
        'GET /external/v1/deposits?page=1&size=1',
        'GET /external/v1/deposits?page=1&size=1',
        'GET /external/v1/wallets?page=1&size=1',
        'GET /external/v1/wallets?page=1&size=1',
      ].sort(),
    );
  });

  it.each([
    [
      'a non-JSON body',
      'upstream exploded',
      'The REST API answered with an unexpected body: not a JSON object.',
    ],
    [
      'JSON that is not the envelope',
      '{"hello":"world"}',
      'The REST API answered with an unexpected body: envelope code is not "ok".',
    ],
    [
      'an envelope whose data has the wrong shape',
      '{"code":"ok","message":"OK","data":{"id":1}}',
      'The REST API answered with an unexpected body: data is not a list.',
    ],
    [
      'a list without paging',
      '{"code":"ok","message":"OK","data":[]}',
      'The REST API answered with an unexpected body: paging is missing or malformed.',
    ],
  ])('maps %s to UPSTREAM_ERROR without leaking the body', async (_case, body, message) => {
    await fault({ method: 'GET', path: '/external/v1/deposits', status: 200, body });
    const { body: response } = await depositsError();
    expect(response.errors?.[0]).toMatchObject({ message, extensions: { code: 'UPSTREAM_ERROR' } });
    expect(JSON.stringify(response)).not.toContain('exploded');
  });

  it('maps an upstream 400 to BAD_USER_INPUT with only the spec message', async () => {
    await fault({
      method: 'GET',
      path: '/external/v1/deposits',
      status: 400,
      body: '{"code":"bad_request","message":"size must be at most 1000","data":null,"debug":"stack trace here"}',
    });
    const { body } = await depositsError();
    expect(body.errors?.[0]).toMatchObject({
      message: 'size must be at most 1000',
      extensions: { code: 'BAD_USER_INPUT', upstream: { status: 400, code: 'bad_request' } },
    });
    expect(JSON.stringify(body)).not.toContain('stack trace');
  });

  it('maps an unreachable upstream to UPSTREAM_UNAVAILABLE', async () => {
    const { testConfig } = await import('../../support/gateway.ts');
    const { createGatewayRuntime } = await import('../../../src/runtime.ts');
    const { createLogger } = await import('../../../src/shared/logger.ts');
    const { suiteLogDestination } = await import('../../support/suite-logs.ts');
    await using runtime = await createGatewayRuntime(testConfig({ upstream: { retryBaseDelayMs: 1 } }), {
      logger: createLogger('debug', suiteLogDestination()),
      upstreamURL: 'http://127.0.0.1:1',
      processMetrics: false,
    });
    const response = await runtime.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${acme.key}` },
      body: JSON.stringify({ query: WALLETS }),
    });
    const body = await response.json();
    expect(body.errors[0]).toMatchObject({
      message: 'The REST API could not be reached.',
      extensions: { code: 'UPSTREAM_UNAVAILABLE' },
    });
  });

  it('masks an unexpected error as "Unexpected error." and logs it with the request id', async () => {
    const { body: list } = await gw.request(
      '{ wallets(first: 1) { nodes { restId } } }',
      {},
      { key: acme.key },
    );
    const walletId = (list.data as { wallets: { nodes: { restId: string }[] } }).wallets.nodes[0]?.restId;
    // An envelope that passes decoding but lacks fields a resolver reads.
    await fault({
      method: 'GET',
      path: `/external/v1/wallets/${walletId}`,
      status: 200,
      body: JSON.stringify({ code: 'ok', message: 'OK', data: { id: walletId } }),
    });
    const response = await gw.request(
      `{ wallet(id: "${walletId}") { restId address } }`,
      {},
      {
        key: acme.key,
        headers: { 'x-request-id': 'req-unexpected-1' },
      },
    );
    expect(response.headers.get('x-request-id')).toBe('req-unexpected-1');
    expect(response.body.errors).toEqual([
      {
        message: 'Unexpected error.',
        locations: [{ line: 1, column: 63 }],
        path: ['wallet', 'address'],
        extensions: { code: 'INTERNAL_SERVER_ERROR' },
      },
    ]);
    const logged = gw.logs.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'unexpected error');
    expect(logged).toMatchObject({
      requestId: 'req-unexpected-1',
      path: 'wallet.address',
      err: { type: 'TypeError' },
    });
  });

  it('never writes a key to the logs', () => {
    const logs = gw.logs.join('\n');
    expect(logs.length).toBeGreaterThan(0);
    for (const key of [acme.key, acme.readOnlyKey, globex.key, globex.readOnlyKey])
      expect(logs).not.toContain(key);
  });

  it('maps a slow upstream to UPSTREAM_TIMEOUT', async () => {
    const slow = await startTestGateway({ upstream: { headersTimeoutMs: 100, maxRetries: 0 } });
    const merchant = await slow.sandbox.world.merchant();
    await slow.sandbox.admin('POST', '/faults', { path: '/external/v1/wallets', hang: true });
    const { body } = await slow.request(WALLETS, {}, { key: merchant.key });
    expect(body.errors?.[0]).toMatchObject({
      message: 'The REST API did not answer in time.',
      extensions: { code: 'UPSTREAM_TIMEOUT' },
    });
    await slow.close();
  });
});
