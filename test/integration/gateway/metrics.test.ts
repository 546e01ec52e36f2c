import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/config.ts';
import { GatewayMetrics } from '../../../src/observability/metrics.ts';
import { DEFAULTS, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { parseMetrics, type Sample, sampleSum } from '../../support/metrics.ts';
import { WITHDRAW, withdrawalInput } from '../../support/sandbox.ts';

let gw: TestGateway;
let acme: { id: string; key: string };
let walletId: string;

beforeAll(async () => {
  gw = await startTestGateway({ config: { queryDeduplication: true } });
  acme = await gw.sandbox.world.merchant();
  walletId = (await gw.sandbox.world.wallet(acme.id, { USDT: '1000', TRX: '0' })).id;
});
afterEach(() => gw.sandbox.admin('DELETE', '/faults'));
afterAll(() => gw.close());

async function scrape(): Promise<{ text: string; samples: Sample[]; contentType: string | null }> {
  const response = await gw.gateway.fetch('http://gateway.test/metrics');
  expect(response.status).toBe(200);
  const text = await response.text();
  return { text, samples: parseMetrics(text), contentType: response.headers.get('content-type') };
}

/** How much each asked value grew while `work` ran. */
async function growth(
  work: () => Promise<unknown>,
  asked: Record<string, [string, Record<string, string>]>,
): Promise<Record<string, number>> {
  const before = (await scrape()).samples;
  await work();
  const after = (await scrape()).samples;
  return Object.fromEntries(
    Object.entries(asked).map(([as, [name, labels]]) => [
      as,
      sampleSum(after, name, labels) - sampleSum(before, name, labels),
    ]),
  );
}

const WALLETS = 'query Wallets { wallets(first: 5) { nodes { id } } }';

describe('GET /metrics', () => {
  it('is the Prometheus text format', async () => {
    const { contentType, text } = await scrape();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(text).toContain('# TYPE gateway_graphql_requests_total counter');
    expect(text).toContain('# TYPE gateway_upstream_request_duration_seconds histogram');
  });

  it('counts one request and its one upstream call on the route template', async () => {
    const grew = await growth(() => gw.request(WALLETS, {}, { key: acme.key }), {
      requests: [
        'gateway_graphql_requests_total',
        { operation_name: 'Wallets', operation_type: 'query', outcome: 'success', status: '200' },
      ],
      durations: ['gateway_graphql_request_duration_seconds_count', { operation_name: 'Wallets' }],
      upstream: [
        'gateway_upstream_requests_total',
        { method: 'GET', route: '/external/v1/wallets', status: '200' },
      ],
      upstreamDurations: [
        'gateway_upstream_request_duration_seconds_count',
        { method: 'GET', route: '/external/v1/wallets' },
      ],
      callsOfOperation: ['gateway_graphql_upstream_calls_total', { operation_name: 'Wallets' }],
      misses: ['gateway_upstream_cache_total', { result: 'miss' }],
      errors: ['gateway_graphql_errors_total', {}],
    });
    expect(grew).toEqual({
      requests: 1,
      durations: 1,
      upstream: 1,
      upstreamDurations: 1,
      callsOfOperation: 1,
      misses: 1,
      errors: 0,
    });
  });

  it('counts a 401 and its code, with no upstream call (a keyless name is not counted on its own)', async () => {
    const grew = await growth(() => gw.request(WALLETS, {}, { key: null }), {
      requests: [
        'gateway_graphql_requests_total',
        { operation_name: '__unverified', outcome: 'error', status: '401' },
      ],
      errors: ['gateway_graphql_errors_total', { operation_name: '__unverified', code: 'UNAUTHENTICATED' }],
      upstream: ['gateway_upstream_requests_total', {}],
    });
    expect(grew).toEqual({ requests: 1, errors: 1, upstream: 0 });
  });

  it('counts requests refused before GraphQL runs, by their code', async () => {
    const grew = await growth(
      () => gw.request(WALLETS, {}, { key: acme.key, path: '/graphql?access_token=abc' }),
      {
        requests: ['gateway_graphql_requests_total', { operation_name: '__none', status: '400' }],
        errors: ['gateway_graphql_errors_total', { code: 'API_KEY_IN_URL' }],
      },
    );
    expect(grew).toEqual({ requests: 1, errors: 1 });
  });

  it('counts a partial result as partial, with the failed field’s code', async () => {
    await gw.sandbox.admin('POST', '/faults', { method: 'GET', path: '/external/v1/deposits', status: 500 });
    const grew = await growth(
      () =>
        gw.request(
          'query Both { wallets(first: 1) { totalCount } deposits(first: 1) { totalCount } }',
          {},
          { key: acme.key },
        ),
      {
        partial: ['gateway_graphql_requests_total', { operation_name: 'Both', outcome: 'partial' }],
        code: ['gateway_graphql_errors_total', { operation_name: 'Both', code: 'UPSTREAM_ERROR' }],
        failedCall: [
          'gateway_upstream_requests_total',
          { method: 'GET', route: '/external/v1/deposits', status: '500' },
        ],
      },
    );
    expect(grew).toEqual({ partial: 1, code: 1, failedCall: 1 });
  });

  it('counts retries and the failed attempts before them', async () => {
    await gw.sandbox.admin('POST', '/faults', {
      method: 'GET',
      path: '/external/v1/wallets',
      status: 503,
      times: 1,
    });
    const grew = await growth(() => gw.request(WALLETS, {}, { key: acme.key }), {
      failed: ['gateway_upstream_requests_total', { route: '/external/v1/wallets', status: '503' }],
      succeeded: ['gateway_upstream_requests_total', { route: '/external/v1/wallets', status: '200' }],
      retries: ['gateway_upstream_retries_total', { method: 'GET', route: '/external/v1/wallets' }],
      calls: ['gateway_graphql_upstream_calls_total', { operation_name: 'Wallets' }],
    });
    expect(grew).toEqual({ failed: 1, succeeded: 1, retries: 1, calls: 2 });
  });

  it('names a timeout as such, not as a status', async () => {
    const slow = await startTestGateway({
      upstream: { headersTimeoutMs: 100, maxRetries: 0 },
    });
    try {
      const m = await slow.sandbox.world.merchant();
      await slow.sandbox.admin('POST', '/faults', { path: '/external/v1/wallets', hang: true });
      await slow.request(WALLETS, {}, { key: m.key });
      const samples = parseMetrics(await (await slow.gateway.fetch('http://gateway.test/metrics')).text());
      expect(
        sampleSum(samples, 'gateway_upstream_requests_total', {
          route: '/external/v1/wallets',
          status: 'timeout',
        }),
      ).toBe(1);
    } finally {
      await slow.sandbox.admin('DELETE', '/faults');
      await slow.close();
    }
  });

  it('counts idempotent replays and reused keys', async () => {
    const create = (amount: string) =>
      gw.request(
        WITHDRAW,
        { input: withdrawalInput(walletId, { amount, idempotencyKey: 'metrics-1' }) },
        { key: acme.key },
      );
    const grew = await growth(
      async () => {
        await create('5.00');
        await create('5.00');
        await create('6.00');
      },
      {
        replayed: ['gateway_idempotency_events_total', { event: 'replayed' }],
        reused: ['gateway_idempotency_events_total', { event: 'key_reused' }],
        posts: [
          'gateway_upstream_requests_total',
          { method: 'POST', route: '/external/v1/withdrawal-intents', status: '201' },
        ],
        mutations: [
          'gateway_graphql_requests_total',
          { operation_name: 'Withdraw', operation_type: 'mutation', outcome: 'success' },
        ],
      },
    );
    expect(grew).toEqual({ replayed: 1, reused: 1, posts: 1, mutations: 3 });
  });

  it('counts queries answered by an identical one in flight', async () => {
    // The first held far longer than a busy machine takes to send the other four.
    await gw.sandbox.admin('POST', '/faults', {
      method: 'GET',
      path: '/external/v1/wallets',
      latencyMs: 1_000,
      times: 1,
    });
    const grew = await growth(
      () => Promise.all(Array.from({ length: 5 }, () => gw.request(WALLETS, {}, { key: acme.key }))),
      {
        deduplicated: ['gateway_graphql_deduplicated_total', { source: 'in_flight' }],
        requests: ['gateway_graphql_requests_total', { operation_name: 'Wallets', outcome: 'success' }],
        upstream: ['gateway_upstream_requests_total', { route: '/external/v1/wallets' }],
      },
    );
    expect(grew).toEqual({ deduplicated: 4, requests: 5, upstream: 1 });
  });

  it('shows each route’s circuit state, and the calls an open circuit refused', async () => {
    const fragile = await startTestGateway({
      upstream: { maxRetries: 0, circuitBreaker: { failures: 2, halfOpenAfterMs: 60_000 } },
    });
    try {
      const m = await fragile.sandbox.world.merchant();
      const state = async () => {
        const samples = parseMetrics(
          await (await fragile.gateway.fetch('http://gateway.test/metrics')).text(),
        );
        return {
          circuit: samples.find(
            (s) => s.name === 'gateway_upstream_circuit_state' && s.labels.route === '/external/v1/wallets',
          )?.value,
          refused: sampleSum(samples, 'gateway_upstream_refused_total', {
            method: 'GET',
            route: '/external/v1/wallets',
            reason: 'circuit_open',
          }),
        };
      };
      await fragile.request(WALLETS, {}, { key: m.key });
      expect(await state()).toEqual({ circuit: 0, refused: 0 });
      await fragile.sandbox.admin('POST', '/faults', { path: '/external/v1/wallets', status: 503, times: 2 });
      await fragile.request(WALLETS, {}, { key: m.key });
      await fragile.request(WALLETS, {}, { key: m.key });
      await fragile.request(WALLETS, {}, { key: m.key });
      expect(await state()).toEqual({ circuit: 2, refused: 1 });
    } finally {
      await fragile.close();
    }
  });

  it('folds anonymous, malformed and surplus operation names', async () => {
    // A gateway admitting 2 names: the third distinct one is __other.
    const metrics = new GatewayMetrics({ maxOperationNames: 2, processMetrics: false });
    expect(metrics.operationLabel('A')).toBe('A');
    expect(metrics.operationLabel('B')).toBe('B');
    expect(metrics.operationLabel('C')).toBe('__other');
    expect(metrics.operationLabel('A')).toBe('A');
    expect(metrics.operationLabel(null)).toBe('__anonymous');
    expect(metrics.operationLabel(undefined)).toBe('__none');
    expect(metrics.operationLabel('x'.repeat(65))).toBe('__other');
    const grew = await growth(
      async () => {
        await gw.request('{ wallets(first: 1) { totalCount } }', {}, { key: acme.key });
        await gw.request('query Broken { wallets(first: 1) { nope } }', {}, { key: acme.key });
      },
      {
        anonymous: ['gateway_graphql_requests_total', { operation_name: '__anonymous' }],
        invalid: [
          'gateway_graphql_requests_total',
          { operation_name: '__none', operation_type: 'unknown', status: '200' },
        ],
        validation: ['gateway_graphql_errors_total', { code: 'GRAPHQL_VALIDATION_FAILED' }],
      },
    );
    expect(grew).toEqual({ anonymous: 1, invalid: 1, validation: 1 });
  });

  it('gives an operation name its own label only for a key the REST API accepted: outsiders cannot fill the slots', async () => {
    // More distinct names than the slots, keyless (introspection needs no key) and with made-up keys.
    const slots = DEFAULTS.metrics?.maxOperationNames ?? 100;
    const flood = await growth(
      async () => {
        for (let i = 0; i <= slots; i++) {
          await gw.request(`query Flood${i} { __typename }`, {}, {});
          await gw.request(
            `query Forged${i} { wallets(first: 1) { totalCount } }`,
            {},
            { key: `made-up-${i}` },
          );
        }
      },
      { unverified: ['gateway_graphql_requests_total', { operation_name: '__unverified' }] },
    );
    expect(flood).toEqual({ unverified: 2 * (slots + 1) });
    const grew = await growth(() => gw.request('query AfterTheFlood { __typename }', {}, { key: acme.key }), {
      real: ['gateway_graphql_requests_total', { operation_name: 'AfterTheFlood' }],
    });
    expect((await scrape()).text).not.toMatch(/Flood\d|Forged\d/);
    expect(grew).toEqual({ real: 1 });
  });

  it('with trusted documents on, counts only the manifest’s names, whoever sends them', async () => {
    const manifest = new Map([['abc', 'query Listed { __typename }']]);
    const audit = await startTestGateway({ config: { trustedDocuments: { mode: 'audit', manifest } } });
    try {
      await audit.request('query Listed { __typename }', {}, {});
      await audit.request('query Unlisted { wallets(first: 1) { totalCount } }', {}, { key: acme.key });
      const samples = parseMetrics(await (await audit.gateway.fetch('http://gateway.test/metrics')).text());
      const names = new Set(
        samples
          .filter((s) => s.name === 'gateway_graphql_requests_total')
          .map((s) => s.labels.operation_name),
      );
      expect([...names].sort()).toEqual(['Listed', '__unverified']);
    } finally {
      await audit.close();
    }
  });

  it('has no key, merchant id, wallet id or other id in any label', async () => {
    const other = await gw.sandbox.world.merchant();
    const wallet = await gw.sandbox.world.wallet(other.id, { USDT: '1', TRX: '0' });
    await gw.request(
      `query ById($id: ID!) { wallet(id: $id) { id } node(id: $id) { id } }`,
      { id: wallet.id },
      { key: other.key },
    );
    await gw.request(`{ deposit(id: "${wallet.id}") { id } }`, {}, { key: other.key });
    await gw.request(WALLETS, {}, { key: 'not-a-real-key-123' });
    const { samples, text } = await scrape();
    for (const secret of [
      acme.key,
      other.key,
      'not-a-real-key-123',
      acme.id,
      other.id,
      wallet.id,
      walletId,
    ]) {
      expect(text).not.toContain(secret);
    }
    const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
    for (const sample of samples) {
      for (const value of Object.values(sample.labels)) expect(value).not.toMatch(uuid);
    }
    const routes = new Set(samples.map((s) => s.labels.route).filter(Boolean));
    expect([...routes].sort()).toEqual(
      expect.arrayContaining([
        '/external/v1/wallets',
        '/external/v1/wallets/{id}',
        '/external/v1/deposits/{id}',
      ]),
    );
  });
});

describe('where /metrics is served', () => {
  it('METRICS_PORT: on a port of its own, and not on the gateway port', async () => {
    const apart = await startTestGateway({ config: { metrics: { port: 0 } } });
    const server = { url: String(apart.runtime.metricsURL) };
    try {
      expect((await apart.gateway.fetch('http://gateway.test/metrics')).status).toBe(404);
      const response = await fetch(server.url);
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('gateway_graphql_requests_total');
      expect((await fetch(server.url.replace('/metrics', '/graphql'))).status).toBe(404);
      expect((await fetch(server.url, { method: 'POST' })).status).toBe(405);
    } finally {
      await apart.close();
    }
  });

  it('is configured by METRICS and METRICS_PORT; in production it is not on the public port unless asked', () => {
    expect(parseConfig({}).metrics).toEqual({ port: undefined, maxOperationNames: 100 });
    expect(parseConfig({ METRICS: 'false' }).metrics).toBeUndefined();
    expect(parseConfig({ METRICS_PORT: '9464' }).metrics?.port).toBe(9464);
    expect(() => parseConfig({ PORT: '4000', METRICS_PORT: '4000' })).toThrow(/METRICS_PORT: must differ/);
    const production = { NODE_ENV: 'production', UPSTREAM_URL: 'https://api.example.com' };
    expect(parseConfig(production).metrics?.port).toBe(9464);
    expect(parseConfig({ ...production, METRICS_PORT: 'same' }).metrics?.port).toBeUndefined();
    expect(() => parseConfig({ ...production, PORT: '9464' })).toThrow(/METRICS_PORT: must differ/);
    expect(parseConfig({ ...production, PORT: '9464', METRICS: 'false' }).port).toBe(9464);
    expect(() => parseConfig({ METRICS_PORT: 'public' })).toThrow(/METRICS_PORT: must be a port/);
  });
});
