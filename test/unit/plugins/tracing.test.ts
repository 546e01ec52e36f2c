import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useRequestId } from '../../../src/plugins/request-id.ts';
import { useTracing } from '../../../src/plugins/tracing.ts';

const KEY = 'Bearer mw_test_tracing_one';

// The process's context manager, as startTracing (observability/tracing.ts) registers it; set
// here only if no other file of this worker did, and removed after.
let registered = false;
beforeAll(() => {
  registered = context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => {
  if (registered) context.disable();
});

function gateway() {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const tracer = provider.getTracer('test');
  /** Answers /fail with a 503 before GraphQL, as the health checks would. */
  const failing: Plugin = {
    onRequest({ url, endResponse }) {
      if (url.pathname === '/fail') endResponse(new Response(null, { status: 503 }));
    },
  };
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: 'type Query { greeting(name: String): String! }',
      resolvers: {
        Query: {
          // An upstream call made during execution, as the transport makes one.
          greeting: async (_root, { name }: { name?: string }) => {
            const span: Span = tracer.startSpan('GET /external/v1/greeting', { kind: SpanKind.CLIENT });
            await Promise.resolve();
            span.end();
            return `hi ${name ?? ''}`;
          },
        },
      },
    }),
    logging: false,
    plugins: [useTracing(tracer), failing, useRequestId()],
  });
  const post = (body: Record<string, unknown>, headers: Record<string, string> = {}, path = '/graphql?x=1') =>
    yoga.fetch(`http://yoga${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: KEY, ...headers },
      body: JSON.stringify(body),
    });
  /** The spans ended so far (SimpleSpanProcessor exports each one asynchronously). */
  const finished = async () => {
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    const named = (name: string) => spans.find((span) => span.name === name) as ReadableSpan;
    return { spans, named };
  };
  return { post, fetch: yoga.fetch, finished };
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('useTracing', () => {
  it('makes a SERVER span per request, with parse, validate and execute as its children and upstream calls under execute', async () => {
    const g = gateway();
    const response = await g.post(
      { query: 'query Greet($name: String) { greeting(name: $name) }', variables: { name: 'ann' } },
      { 'x-request-id': 'trace-req-1' },
    );
    expect(await response.json()).toEqual({ data: { greeting: 'hi ann' } });
    const { named } = await g.finished();
    const request = named('POST /graphql');
    expect(request.kind).toBe(SpanKind.SERVER);
    expect(request.parentSpanContext).toBeUndefined();
    expect(request.attributes).toEqual({
      'http.request.method': 'POST',
      'url.path': '/graphql',
      'http.route': '/graphql',
      'gateway.request_id': 'trace-req-1',
      'graphql.operation.type': 'query',
      'graphql.operation.name': 'Greet',
      'http.response.status_code': 200,
    });
    const { spanId, traceId } = request.spanContext();
    for (const phase of ['graphql.parse', 'graphql.validate', 'graphql.execute']) {
      expect(parentOf(named(phase)), phase).toBe(spanId);
      expect(named(phase).spanContext().traceId).toBe(traceId);
    }
    expect(named('graphql.execute').attributes).toEqual({
      'graphql.operation.type': 'query',
      'graphql.operation.name': 'Greet',
    });
    expect(parentOf(named('GET /external/v1/greeting'))).toBe(named('graphql.execute').spanContext().spanId);
    expect(request.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("continues the caller's W3C traceparent", async () => {
    const g = gateway();
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    await g.post({ query: '{ greeting }' }, { traceparent: `00-${traceId}-b7ad6b7169203331-01` });
    const request = (await g.finished()).named('POST /graphql');
    expect(request.spanContext().traceId).toBe(traceId);
    expect(parentOf(request)).toBe('b7ad6b7169203331');
    expect(request.attributes['graphql.operation.name']).toBe('');
  });

  it('never records the key, the variables or the document', async () => {
    const g = gateway();
    await g.post({
      query: 'query Greet($name: String) { greeting(name: $name) }',
      variables: { name: 'secret-name' },
    });
    const { spans } = await g.finished();
    const recorded = JSON.stringify(
      spans.map((span) => [span.name, span.attributes, span.events, span.status]),
    );
    expect(recorded).not.toContain('mw_test_tracing');
    expect(recorded).not.toContain('secret-name');
    expect(recorded).not.toContain('greeting(');
  });

  it('marks a request answered 5xx as failed, whoever answered it, and a 4xx not', async () => {
    const g = gateway();
    await g.fetch('http://yoga/fail');
    const first = await g.finished();
    const failed = first.named('GET /fail');
    expect(failed.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed.attributes['http.response.status_code']).toBe(503);
    // No GraphQL ran for it.
    expect(first.spans.map((span) => span.name)).toEqual(['GET /fail']);
    const bad = await g.post({ query: '{ greeting' }, { accept: 'application/graphql-response+json' });
    expect(bad.status).toBe(400);
    const { named } = await g.finished();
    expect(named('POST /graphql').status.code).toBe(SpanStatusCode.UNSET);
    expect(named('POST /graphql').attributes['http.response.status_code']).toBe(400);
  });

  it('marks a phase that threw as failed, by the name of its error only', async () => {
    const g = gateway();
    await g.post({ query: '{ greeting' });
    const { spans, named } = await g.finished();
    expect(named('graphql.parse').status).toEqual({ code: SpanStatusCode.ERROR, message: 'GraphQLError' });
    expect(spans.map((span) => span.name)).not.toContain('graphql.execute');
  });

  it('ends every span it starts, and leaves no span active after the request', async () => {
    const g = gateway();
    await Promise.all([g.post({ query: '{ greeting }' }), g.post({ query: '{ greeting }' })]);
    const { spans } = await g.finished();
    const requests = spans.filter((span) => span.name === 'POST /graphql');
    expect(requests).toHaveLength(2);
    expect(new Set(requests.map((span) => span.spanContext().traceId)).size).toBe(2);
    // Request, parse, validate, execute and the upstream call, each ended once.
    expect(spans).toHaveLength(2 * 5);
    expect(new Set(spans.map((span) => span.spanContext().spanId)).size).toBe(2 * 5);
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});
