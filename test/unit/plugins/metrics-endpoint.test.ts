import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { GatewayMetrics } from '../../../src/observability/metrics.ts';
import { useMetricsEndpoint } from '../../../src/plugins/metrics-endpoint.ts';

const schema = createSchema({
  typeDefs: 'type Query { greeting: String! }',
  resolvers: { Query: { greeting: () => 'hi' } },
});

function gateway(scrape: () => Promise<{ contentType: string; body: string }>) {
  let scrapes = 0;
  const yoga = createYoga({
    schema,
    logging: false,
    plugins: [
      useMetricsEndpoint(() => {
        scrapes++;
        return scrape();
      }),
    ],
  });
  return { fetch: yoga.fetch, scrapes: () => scrapes };
}

const PROMETHEUS = 'text/plain; version=0.0.4; charset=utf-8';

describe('useMetricsEndpoint', () => {
  it("answers GET /metrics with the scrape's body and content type", async () => {
    const g = gateway(async () => ({ contentType: PROMETHEUS, body: 'up 1\n' }));
    const response = await g.fetch('http://yoga/metrics');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(PROMETHEUS);
    expect(await response.text()).toBe('up 1\n');
    // The path decides, not the query string.
    expect(await (await g.fetch('http://yoga/metrics?name[]=up')).text()).toBe('up 1\n');
    expect(g.scrapes()).toBe(2);
  });

  it("serves a gateway's own registry in the Prometheus text format", async () => {
    const metrics = new GatewayMetrics({ maxOperationNames: 10, processMetrics: false });
    const g = gateway(async () => ({
      contentType: metrics.registry.contentType,
      body: await metrics.registry.metrics(),
    }));
    const response = await g.fetch('http://yoga/metrics');
    expect(response.headers.get('content-type')).toBe(metrics.registry.contentType);
    expect(await response.text()).toContain('# TYPE gateway_graphql_requests_total counter');
  });

  it('refuses other methods with 405 and Allow: GET, without scraping', async () => {
    const g = gateway(async () => ({ contentType: PROMETHEUS, body: 'up 1\n' }));
    for (const method of ['POST', 'PUT', 'DELETE', 'HEAD']) {
      const response = await g.fetch('http://yoga/metrics', { method });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('GET');
      expect(await response.text()).toBe('');
    }
    expect(g.scrapes()).toBe(0);
  });

  it('answers 503 when the scrape fails', async () => {
    const g = gateway(async () => {
      throw new Error('a worker did not answer');
    });
    const response = await g.fetch('http://yoga/metrics');
    expect(response.status).toBe(503);
    expect(await response.text()).toBe('metrics unavailable\n');
  });

  it('leaves every other path to Yoga', async () => {
    const g = gateway(async () => ({ contentType: PROMETHEUS, body: 'up 1\n' }));
    const response = await g.fetch('http://yoga/graphql?query=%7Bgreeting%7D');
    expect(await response.json()).toEqual({ data: { greeting: 'hi' } });
    expect((await g.fetch('http://yoga/metrics/x')).status).toBe(404);
    expect((await g.fetch('http://yoga/metricsx')).status).toBe(404);
    expect(g.scrapes()).toBe(0);
  });
});
