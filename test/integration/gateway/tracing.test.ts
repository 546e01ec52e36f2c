import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/config.ts';
import { startTracing, type Tracing } from '../../../src/observability/tracing.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { type ReceivedSpan, startOtlpReceiver } from '../../support/otlp-receiver.ts';
import { EXTERNAL_TRON_ADDRESS, WITHDRAW, withdrawalInput } from '../../support/sandbox.ts';

const SERVER = 2;
const CLIENT = 3;

let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
let tracing: Tracing;
let gw: TestGateway;
let acme: { id: string; key: string };
let walletId: string;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  tracing = startTracing(
    { url: receiver.url, serviceName: 'gateway-under-test', sampler: 'parentbased_always_on', ratio: 1 },
    { version: '0.0.0-test' },
  );
  gw = await startTestGateway({
    upstream: { telemetry: { tracer: tracing.tracer } },
    infrastructure: { tracer: tracing.tracer },
  });
  acme = await gw.sandbox.world.merchant();
  walletId = (await gw.sandbox.world.wallet(acme.id, { USDT: '1000', TRX: '0' })).id;
});
beforeEach(async () => {
  gw.resetCalls();
  await gw.sandbox.admin('DELETE', '/faults');
});
afterAll(async () => {
  await tracing.shutdown();
  await gw.close();
  await receiver.close();
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** Every span of one trace, once the provider has exported what has ended. */
async function spansOf(traceId: string): Promise<ReceivedSpan[]> {
  await tracing.flush();
  return receiver.spans.filter((s) => s.traceId === traceId);
}

function one(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((s) => s.name === name);
  expect(found.map((s) => s.name)).toEqual([name]);
  return found[0] as ReceivedSpan;
}

const SCREEN = 'query Screen { wallets(first: 5) { nodes { id } } }';

describe('OpenTelemetry traces', () => {
  it('continue the caller’s trace: request → parse, validate, execute → upstream call', async () => {
    const traceId = hex(16);
    const callerSpan = hex(8);
    const response = await gw.request(
      SCREEN,
      {},
      {
        key: acme.key,
        headers: { traceparent: `00-${traceId}-${callerSpan}-01` },
      },
    );
    expect(response.status).toBe(200);
    const spans = await spansOf(traceId);

    const http = one(spans, 'POST /graphql');
    expect(http).toMatchObject({
      kind: SERVER,
      parentSpanId: callerSpan,
      attributes: {
        'http.request.method': 'POST',
        'http.route': '/graphql',
        'http.response.status_code': 200,
        'graphql.operation.name': 'Screen',
        'graphql.operation.type': 'query',
        'gateway.request_id': response.headers.get('x-request-id'),
      },
      resource: { 'service.name': 'gateway-under-test', 'service.version': '0.0.0-test' },
    });
    for (const phase of ['graphql.parse', 'graphql.validate']) {
      expect(one(spans, phase).parentSpanId).toBe(http.spanId);
    }
    const execute = one(spans, 'graphql.execute');
    expect(execute).toMatchObject({
      parentSpanId: http.spanId,
      attributes: { 'graphql.operation.name': 'Screen', 'graphql.operation.type': 'query' },
    });
    const upstream = one(spans, 'GET /external/v1/wallets');
    expect(upstream).toMatchObject({
      kind: CLIENT,
      parentSpanId: execute.spanId,
      attributes: {
        'http.request.method': 'GET',
        'url.template': '/external/v1/wallets',
        'http.response.status_code': 200,
      },
    });

    // The REST API received the same trace, with the upstream span as its parent, and the request id.
    expect(gw.sandbox.sandbox.requests).toEqual([
      expect.objectContaining({
        path: '/external/v1/wallets?page=1&size=5',
        traceparent: `00-${traceId}-${upstream.spanId}-01`,
        requestId: response.headers.get('x-request-id'),
      }),
    ]);

    // The access log names the trace.
    const line = gw.logs
      .map((l) => JSON.parse(l) as { msg: string; requestId?: string; traceId?: string })
      .find((l) => l.msg === 'request' && l.requestId === response.headers.get('x-request-id'));
    expect(line?.traceId).toBe(traceId);
  });

  it('start a trace when the caller sent none, and still send one upstream', async () => {
    const response = await gw.request(SCREEN, {}, { key: acme.key });
    const [sent] = gw.sandbox.sandbox.requests;
    const traceId = /^00-([0-9a-f]{32})-[0-9a-f]{16}-01$/.exec(sent?.traceparent ?? '')?.[1];
    expect(traceId).toBeDefined();
    const http = one(await spansOf(traceId as string), 'POST /graphql');
    expect(http.parentSpanId).toBe('');
    expect(http.attributes['gateway.request_id']).toBe(response.headers.get('x-request-id'));
  });

  it('record each attempt, with its resend count and failure', async () => {
    await gw.sandbox.admin('POST', '/faults', {
      method: 'GET',
      path: '/external/v1/wallets',
      status: 503,
      times: 1,
    });
    const traceId = hex(16);
    await gw.request(SCREEN, {}, { key: acme.key, headers: { traceparent: `00-${traceId}-${hex(8)}-01` } });
    const attempts = (await spansOf(traceId)).filter((s) => s.name === 'GET /external/v1/wallets');
    expect(
      attempts.map((s) => [
        s.attributes['http.response.status_code'],
        s.attributes['http.request.resend_count'],
      ]),
    ).toEqual([
      [503, undefined],
      [200, 1],
    ]);
    expect(attempts[0]?.status.code).toBe(2);
  });

  it('cover the idempotency claim and the POST of a withdrawal', async () => {
    const traceId = hex(16);
    const response = await gw.request(
      WITHDRAW,
      { input: withdrawalInput(walletId, { amount: '3.00', idempotencyKey: 'traced-1' }) },
      { key: acme.key, headers: { traceparent: `00-${traceId}-${hex(8)}-01` } },
    );
    expect(response.body.data?.createWithdrawalIntent).toEqual({
      __typename: 'CreateWithdrawalIntentSuccess',
    });
    const spans = await spansOf(traceId);
    const execute = one(spans, 'graphql.execute');
    expect(execute.attributes['graphql.operation.type']).toBe('mutation');
    expect(one(spans, 'withdrawal.idempotency.claim').parentSpanId).toBe(execute.spanId);
    const post = one(spans, 'POST /external/v1/withdrawal-intents');
    expect(post).toMatchObject({
      parentSpanId: execute.spanId,
      attributes: { 'http.response.status_code': 201 },
    });
  });

  it('export nothing for a trace the caller did not sample, and say so upstream', async () => {
    const traceId = hex(16);
    await gw.request(SCREEN, {}, { key: acme.key, headers: { traceparent: `00-${traceId}-${hex(8)}-00` } });
    expect(await spansOf(traceId)).toEqual([]);
    expect(gw.sandbox.sandbox.requests[0]?.traceparent).toMatch(
      new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`),
    );
  });

  it('never carry the key, variables or document', async () => {
    await tracing.flush();
    expect(receiver.bodies.length).toBeGreaterThan(0);
    for (const body of receiver.bodies) {
      expect(body).not.toContain(acme.key);
      expect(body).not.toContain(EXTERNAL_TRON_ADDRESS);
      expect(body).not.toContain('wallets(first');
      expect(body.toLowerCase()).not.toContain('bearer');
    }
  });
});

describe('tracing configuration', () => {
  it('is off unless an OTLP endpoint is set', () => {
    expect(parseConfig({}).tracing).toBeUndefined();
    expect(
      parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_TRACES_EXPORTER: 'none' })
        .tracing,
    ).toBeUndefined();
    expect(
      parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })
        .tracing,
    ).toBeUndefined();
  });

  it('reads the standard variables', () => {
    expect(parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
      url: 'http://collector:4318/v1/traces',
      serviceName: 'merchant-wallet-gateway',
      sampler: 'parentbased_always_on',
      ratio: 1,
    });
    expect(
      parseConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:9999/custom',
        OTEL_SERVICE_NAME: 'gw-eu',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
      }).tracing,
    ).toEqual({
      url: 'http://traces:9999/custom',
      serviceName: 'gw-eu',
      sampler: 'parentbased_traceidratio',
      ratio: 0.25,
    });
    expect(() =>
      parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    ).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL: only http\/json/);
    expect(() => parseConfig({ OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(/OTEL_TRACES_SAMPLER/);
  });
});
