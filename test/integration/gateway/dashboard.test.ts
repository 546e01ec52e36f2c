import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayMetrics } from '../../../src/observability/metrics.ts';
import { DEFAULTS, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { parseMetrics } from '../../support/metrics.ts';
import { WITHDRAW, withdrawalBody, withdrawalInput } from '../../support/sandbox.ts';
import { subscribeSSE } from '../../support/subscriptions.ts';

// ops/grafana/gateway.json must only draw metrics the gateway exports: a renamed metric would
// leave a panel empty without anyone noticing.

interface Panel {
  title: string;
  type: string;
  targets?: { expr: string }[];
}
const dashboard = JSON.parse(
  readFileSync(new URL('../../../ops/grafana/gateway.json', import.meta.url), 'utf8'),
) as {
  panels: Panel[];
};
const exprs = dashboard.panels.flatMap((p) =>
  (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })),
);

/** The metric names an expression reads: identifiers that are followed by a selector. */
function metricsIn(expr: string): string[] {
  return [...expr.matchAll(/\b([a-z_][a-z0-9_]*)\{/g)].map((m) => m[1] as string);
}

/** A histogram is drawn through its series: `…_seconds_bucket` is `…_seconds`. */
function withoutHistogramSuffix(name: string): string {
  return name.replace(/_(bucket|sum|count)$/, '');
}

let gw: TestGateway;
let metrics: GatewayMetrics;

beforeAll(async () => {
  metrics = new GatewayMetrics({ maxOperationNames: 100, processMetrics: true });
  // gateway_redis_responsive is exported only where there is a Redis.
  metrics.watchRedis(() => true);
  gw = await startTestGateway({
    upstream: { cacheTtlMs: 60_000, circuitBreaker: DEFAULTS.upstream.circuitBreaker },
    config: { maxUpstreamCallsPerRequest: 2, subscriptions: { pollMs: 20, maxPollMs: 20 } },
    infrastructure: { metrics },
  });
});
afterAll(() => gw.close());

/**
 * Traffic that touches every metric: success, cache hit, retry, budget refusal, replay,
 * deduplication, an unknown persisted document, a subscription that sees a change and ends.
 */
async function traffic() {
  const m = await gw.sandbox.world.merchant();
  const wallet = await gw.sandbox.world.wallet(m.id, { USDT: '100', TRX: '0' });
  const wallets = 'query Wallets { wallets(first: 2) { nodes { id } } }';
  await gw.request(wallets, {}, { key: m.key });
  await gw.request(wallets, {}, { key: m.key });
  await gw.sandbox.admin('POST', '/faults', {
    method: 'GET',
    path: '/external/v1/deposits',
    status: 503,
    times: 1,
  });
  await gw.request('query Deposits { deposits(first: 1) { totalCount } }', {}, { key: m.key });
  await gw.request(
    'query TooMany { wallets(first: 9) { totalCount } deposits(first: 9) { totalCount } withdrawalIntents(first: 9) { totalCount } }',
    {},
    { key: m.key },
  );
  const input = withdrawalInput(wallet.id, { idempotencyKey: 'dashboard-1' });
  await gw.request(WITHDRAW, { input }, { key: m.key });
  await gw.request(WITHDRAW, { input }, { key: m.key });
  // The first held far longer than a busy machine takes to send the other two.
  await gw.sandbox.admin('POST', '/faults', {
    method: 'GET',
    path: '/external/v1/withdrawal-intents',
    latencyMs: 1_000,
    times: 1,
  });
  const same = 'query Same { withdrawalIntents(first: 3) { totalCount } }';
  await Promise.all([1, 2, 3].map(() => gw.request(same, {}, { key: m.key })));

  // An APQ lookup of a document never registered (counted as not_found).
  await gw.gateway.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${m.key}` },
    body: JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } }),
  });

  const created = await gw.sandbox.call('POST', '/external/v1/withdrawal-intents', {
    key: m.key,
    body: withdrawalBody(wallet.id, { amount: '1.00' }),
  });
  const watched = await subscribeSSE(
    gw.gateway,
    'subscription Watch($id: ID!) { withdrawalIntentUpdated(id: $id) { status } }',
    { id: created.body.data.id },
    m.key,
  );
  expect((await watched.next())?.data.withdrawalIntentUpdated.status).toBe('PREPARING');
  await gw.sandbox.world.transitionWithdrawal(created.body.data.id, 'cancelled');
  expect((await watched.rest()).map((r) => r.data.withdrawalIntentUpdated.status)).toEqual(['CANCELLED']);
}

describe('the Grafana dashboard', () => {
  it('has panels for requests, errors, latency, upstream, cache, deduplication and the event loop', () => {
    const titles = dashboard.panels.map((p) => p.title).join('\n');
    for (const topic of [
      'Requests',
      'Errors',
      'Latency',
      'Upstream calls per operation',
      'Upstream p99',
      'Micro-cache',
      'identical one in flight',
      'Event loop',
      'Open subscriptions',
      'Subscription polls',
    ]) {
      expect(titles).toContain(topic);
    }
    expect(exprs.length).toBeGreaterThan(15);
  });

  it('draws every gateway_ metric the gateway registers, and docs/observability.md lists each in its table', () => {
    const registered = metrics.registry
      .getMetricsAsArray()
      .map((metric) => metric.name)
      .filter((name) => name.startsWith('gateway_'));
    expect(registered.length).toBeGreaterThan(10);
    const drawn = new Set(exprs.flatMap(({ expr }) => metricsIn(expr).map(withoutHistogramSuffix)));
    expect(registered.filter((name) => !drawn.has(name))).toEqual([]);
    const docs = readFileSync(new URL('../../../docs/observability.md', import.meta.url), 'utf8');
    const documented = new Set([...docs.matchAll(/^\| `(gateway_[a-z_]+)` \|/gm)].map((m) => m[1]));
    expect(registered.filter((name) => !documented.has(name))).toEqual([]);
  });

  it('queries only metrics that /metrics exports after traffic', async () => {
    await traffic();
    const samples = parseMetrics(await (await gw.gateway.fetch('http://gateway.test/metrics')).text());
    const exported = new Set(samples.map((s) => s.name));
    const missing = exprs.flatMap(({ panel, expr }) =>
      metricsIn(expr)
        .filter((name) => !exported.has(name))
        .map((name) => `${panel}: ${name}`),
    );
    expect(missing).toEqual([]);
    // Every expression names at least one metric: the check above cannot pass vacuously.
    for (const { expr } of exprs) expect(metricsIn(expr).length).toBeGreaterThan(0);
  });
});
