import { performance } from 'node:perf_hooks';
import { GraphQLError } from 'graphql';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { GatewayContext } from '../../../src/context.ts';
import { GatewayError } from '../../../src/errors/errors.ts';
import { GatewayMetrics } from '../../../src/observability/metrics.ts';
import { markShared } from '../../../src/plugins/query-deduplication.ts';
import { refusal } from '../../../src/plugins/refusal.ts';
import { markArrival, pathOf, useRequestTelemetry } from '../../../src/plugins/request-telemetry.ts';

const KEY = 'Bearer mw_test_telemetry_one';

/** Refuses `?refuse` requests as a rate limit after it would, with no GraphQL result. */
const refuser: Plugin = {
  onRequest({ request, url, endResponse }) {
    if (!url.searchParams.has('refuse')) return;
    endResponse(refusal(request, 429, { message: 'Too many.', extensions: { code: 'RATE_LIMITED' } }));
  },
};

function gateway(options: { level?: string; countsName?: (name: string) => boolean } = {}) {
  const lines: Record<string, unknown>[] = [];
  // Without pino's base fields (pid, hostname, time): a line is what the plugin logs.
  const logger = pino(
    { level: options.level ?? 'info', base: undefined, timestamp: false },
    {
      write: (line: string) => lines.push(JSON.parse(line)),
    },
  );
  const metrics = new GatewayMetrics({ maxOperationNames: 10, processMetrics: false });
  const yoga = createYoga<{ req?: object }>({
    schema: createSchema<GatewayContext>({
      typeDefs: /* GraphQL */ `
        type Query {
          greeting(name: String): String!
          failing: String
          required: String!
          uncoded: String
          shared: String!
        }
        type Mutation { touch: String! }
      `,
      resolvers: {
        Query: {
          greeting: (_root, { name }: { name?: string }, context) => {
            // What the upstream client counts for the request's REST calls.
            context.caller.calls.made += 3;
            return `hi ${name ?? ''}`;
          },
          failing: () => {
            throw new GatewayError('UPSTREAM_TIMEOUT', 'The REST API did not answer in time.');
          },
          required: () => {
            throw new GatewayError('UPSTREAM_UNAVAILABLE', 'The REST API cannot be reached.');
          },
          uncoded: () => {
            throw new GraphQLError('no code');
          },
          shared: (_root, _args, context) => {
            markShared(context, 'kept');
            return 'kept';
          },
        },
        Mutation: { touch: () => 'touched' },
      },
    }),
    logging: false,
    maskedErrors: false,
    context: () => ({ caller: { calls: { made: 0, max: 100 }, reads: { fromCache: 2, joined: 1 } } }),
    plugins: [
      useRequestTelemetry({
        logger,
        metrics,
        graphqlEndpoint: '/graphql',
        countsName: (_context, name) => options.countsName?.(name) ?? true,
      }) as Plugin,
      refuser,
    ],
  });
  const post = (
    body: Record<string, unknown>,
    headers: Record<string, string> = {},
    serverContext?: { req: object },
    search = '',
  ) =>
    yoga.fetch(
      `http://yoga/graphql${search}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: KEY, ...headers },
        body: JSON.stringify(body),
      },
      serverContext ?? {},
    );
  /** The metric's samples, by their labels. */
  const samples = async (name: string) =>
    (await metrics.registry.getSingleMetric(name)?.get())?.values.map(({ labels, value }) => ({
      labels,
      value,
    }));
  return { post, fetch: yoga.fetch, lines, samples };
}

describe('useRequestTelemetry, the access log', () => {
  it('logs one line per request with the operation, outcome, codes and REST calls', async () => {
    const g = gateway();
    const response = await g.post(
      { query: 'query Greet($name: String) { greeting(name: $name) }', variables: { name: 'ann' } },
      { 'x-request-id': 'req-1', 'graphql-client-name': 'dashboard', 'graphql-client-version': '1.2.3' },
      undefined,
      '?trace=1',
    );
    expect(response.status).toBe(200);
    expect(g.lines).toEqual([
      {
        level: 30,
        msg: 'request',
        requestId: 'req-1',
        method: 'POST',
        path: '/graphql',
        status: 200,
        durationMs: expect.any(Number),
        operationName: 'Greet',
        operationType: 'query',
        outcome: 'success',
        errorCodes: [],
        upstreamCalls: 3,
        cacheHits: 2,
        coalesced: 1,
        sharedResult: null,
        client: { name: 'dashboard', version: '1.2.3' },
      },
    ]);
  });

  it('never logs the key, the variables or the document', async () => {
    const g = gateway();
    await g.post({
      query: 'query Greet($name: String) { greeting(name: $name) }',
      variables: { name: 'secret-name' },
    });
    const text = JSON.stringify(g.lines);
    expect(text).not.toContain('mw_test_telemetry');
    expect(text).not.toContain('secret-name');
    expect(text).not.toContain('greeting(');
  });

  it('gives the outcome of errors: partial with data, error with data null, each code once; uncoded errors as INTERNAL_SERVER_ERROR', async () => {
    const g = gateway();
    await g.post({ query: '{ greeting failing }' });
    await g.post({ query: 'query Broken { uncoded }' });
    // `data` is there, its fields null: partial, as the plugin counts any data.
    await g.post({ query: '{ a: failing b: failing }' });
    await g.post({ query: 'query Down { required }' });
    expect(
      g.lines.map(({ outcome, errorCodes, operationName }) => ({ outcome, errorCodes, operationName })),
    ).toEqual([
      { outcome: 'partial', errorCodes: ['UPSTREAM_TIMEOUT'], operationName: null },
      { outcome: 'partial', errorCodes: ['INTERNAL_SERVER_ERROR'], operationName: 'Broken' },
      { outcome: 'partial', errorCodes: ['UPSTREAM_TIMEOUT'], operationName: null },
      { outcome: 'error', errorCodes: ['UPSTREAM_UNAVAILABLE'], operationName: 'Down' },
    ]);
  });

  it('logs a request refused before GraphQL ran with its refusal code', async () => {
    const g = gateway();
    const response = await g.post({ query: '{ greeting }' }, {}, undefined, '?refuse');
    expect(response.status).toBe(429);
    expect(g.lines).toEqual([
      expect.objectContaining({
        path: '/graphql',
        status: 429,
        operationName: null,
        operationType: null,
        outcome: 'error',
        errorCodes: ['RATE_LIMITED'],
        upstreamCalls: 0,
        sharedResult: null,
      }),
    ]);
  });

  it('logs how a request was answered with another’s result', async () => {
    const g = gateway();
    await g.post({ query: '{ shared }' });
    expect(g.lines[0]).toMatchObject({ sharedResult: 'kept' });
  });

  it('logs probes at debug, and other paths without GraphQL fields', async () => {
    const info = gateway();
    await info.fetch('http://yoga/healthz');
    await info.fetch('http://yoga/metrics');
    expect(info.lines).toEqual([]);
    const debug = gateway({ level: 'debug' });
    await debug.fetch('http://yoga/healthz?full=1', { headers: { 'x-request-id': 'probe-1' } });
    expect(debug.lines).toEqual([
      {
        level: 20,
        msg: 'request',
        requestId: 'probe-1',
        method: 'GET',
        path: '/healthz',
        status: 404,
        durationMs: expect.any(Number),
        client: { name: null, version: null },
      },
    ]);
  });

  it("bounds the client's name and version, and takes Apollo's headers when the standard ones are missing", async () => {
    const g = gateway();
    await g.post(
      { query: '{ greeting }' },
      { 'apollographql-client-name': `caf\u00e9 ${'x'.repeat(100)}`, 'apollographql-client-version': '9' },
    );
    expect(g.lines[0]?.client).toEqual({ name: `caf? ${'x'.repeat(59)}`, version: '9' });
  });

  it('counts the duration from when the hot path took up the Node request', async () => {
    const g = gateway();
    const req = {};
    markArrival(req, performance.now() - 5_000);
    await g.post({ query: '{ greeting }' }, {}, { req });
    expect(g.lines[0]?.durationMs).toBeGreaterThanOrEqual(5_000);
    const [sum] = ((await g.samples('gateway_graphql_request_duration_seconds')) ?? []).filter(
      (s) => (s.labels as { le?: unknown }).le === undefined && s.value >= 5,
    );
    expect(sum).toBeDefined();
  });
});

describe('useRequestTelemetry, the metrics', () => {
  it('counts GraphQL requests by operation, type, outcome and status, with their error codes and REST calls', async () => {
    const g = gateway();
    await g.post({ query: 'query Greet { greeting }' });
    await g.post({ query: 'query Greet { greeting }' });
    await g.post({ query: 'mutation { touch }' });
    await g.post({ query: 'query Partial { greeting failing }' });
    expect(await g.samples('gateway_graphql_requests_total')).toEqual([
      {
        labels: { operation_name: 'Greet', operation_type: 'query', outcome: 'success', status: '200' },
        value: 2,
      },
      {
        labels: {
          operation_name: '__anonymous',
          operation_type: 'mutation',
          outcome: 'success',
          status: '200',
        },
        value: 1,
      },
      {
        labels: { operation_name: 'Partial', operation_type: 'query', outcome: 'partial', status: '200' },
        value: 1,
      },
    ]);
    expect(await g.samples('gateway_graphql_errors_total')).toEqual([
      { labels: { operation_name: 'Partial', code: 'UPSTREAM_TIMEOUT' }, value: 1 },
    ]);
    expect(await g.samples('gateway_graphql_upstream_calls_total')).toEqual([
      { labels: { operation_name: 'Greet' }, value: 6 },
      { labels: { operation_name: 'Partial' }, value: 3 },
    ]);
  });

  it('counts a name its caller may not count on its own as __unverified, while the log keeps it', async () => {
    const g = gateway({ countsName: (name) => name === 'Known' });
    await g.post({ query: 'query MadeUp { greeting }' });
    await g.post({ query: 'query Known { greeting }' });
    expect((await g.samples('gateway_graphql_requests_total'))?.map((s) => s.labels.operation_name)).toEqual([
      '__unverified',
      'Known',
    ]);
    expect(g.lines.map((line) => line.operationName)).toEqual(['MadeUp', 'Known']);
  });

  it('counts refused GraphQL requests as __none, and nothing for other paths', async () => {
    const g = gateway();
    await g.post({ query: '{ greeting }' }, {}, undefined, '?refuse');
    await g.fetch('http://yoga/healthz');
    await g.fetch('http://yoga/elsewhere?refuse');
    expect(await g.samples('gateway_graphql_requests_total')).toEqual([
      {
        labels: { operation_name: '__none', operation_type: 'unknown', outcome: 'error', status: '429' },
        value: 1,
      },
    ]);
    expect(await g.samples('gateway_graphql_errors_total')).toEqual([
      { labels: { operation_name: '__none', code: 'RATE_LIMITED' }, value: 1 },
    ]);
  });

  it('counts a document that does not parse as an error of no operation', async () => {
    const g = gateway();
    await g.post({ query: '{ greeting' });
    expect(await g.samples('gateway_graphql_requests_total')).toEqual([
      {
        labels: { operation_name: '__none', operation_type: 'unknown', outcome: 'error', status: '200' },
        value: 1,
      },
    ]);
    expect(g.lines[0]).toMatchObject({ operationName: null, errorCodes: ['GRAPHQL_PARSE_FAILED'] });
  });
});

describe('pathOf', () => {
  it('is the path of an absolute URL, without its query or fragment', () => {
    expect(pathOf('http://yoga/graphql?query=x')).toBe('/graphql');
    expect(pathOf('http://yoga:4000/a/b#c')).toBe('/a/b');
    expect(pathOf('http://yoga')).toBe('/');
    // Request.url always has a path: `http://yoga?x=/y` arrives as this.
    expect(pathOf(new Request('http://yoga?x=/y').url)).toBe('/');
  });
});
