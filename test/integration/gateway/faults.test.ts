import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { closeWithoutLeaks } from '../../support/leaks.ts';

let gw: TestGateway;
let key: string;
const QUERY = '{ wallets(first: 1) { totalCount } deposits(first: 1) { totalCount } }';

// No socket, server or timer may outlive this file, and no call or timer its request.
closeWithoutLeaks(() => gw);
beforeAll(async () => {
  // Short timeouts so the slow faults resolve quickly, yet far above any answer of a busy machine;
  // bodies over 4 KiB are refused.
  gw = await startTestGateway({
    upstream: {
      bodyTimeoutMs: 1_000,
      headersTimeoutMs: 1_000,
      maxResponseBytes: 4_096,
      maxRetryAfterMs: 300,
    },
  });
  const merchant = await gw.sandbox.world.merchant();
  key = merchant.key;
  await gw.sandbox.world.wallet(merchant.id);
});
beforeEach(() => gw.resetCalls());

const fault = (body: Record<string, unknown>) => gw.sandbox.admin('POST', '/faults', body);
const depositCalls = () => gw.upstreamCalls().filter((c) => c.includes('/deposits'));

describe('fault matrix (GETs)', () => {
  it('429 with a short Retry-After is waited out and retried', async () => {
    await fault({
      method: 'GET',
      path: '/external/v1/deposits',
      status: 429,
      headers: { 'retry-after': '0' },
      times: 1,
    });
    const { body } = await gw.request(QUERY, {}, { key });
    expect(body).toEqual({ data: { wallets: { totalCount: 1 }, deposits: { totalCount: 0 } } });
    expect(depositCalls()).toHaveLength(2);
  });

  it('429 with a long Retry-After is surfaced as RATE_LIMITED with the delay, siblings intact', async () => {
    await fault({
      method: 'GET',
      path: '/external/v1/deposits',
      status: 429,
      headers: { 'retry-after': '30' },
    });
    const { body } = await gw.request(
      '{ wallets(first: 1) { totalCount } deposit(id: "00000000-0000-4000-8000-000000000000") { id } }',
      {},
      { key },
    );
    await fault({
      method: 'GET',
      path: '/external/v1/deposits',
      status: 429,
      headers: { 'retry-after': '30' },
    });
    const list = await gw.request(QUERY, {}, { key });
    expect(list.body.errors?.[0]).toMatchObject({
      path: ['deposits'],
      extensions: { code: 'RATE_LIMITED', retryAfterSeconds: 30, upstream: { status: 429 } },
    });
    expect(body.data).toEqual({ wallets: { totalCount: 1 }, deposit: null });
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 30 });
  });

  it('a truncated body is retried, then UPSTREAM_UNAVAILABLE', async () => {
    await fault({
      method: 'GET',
      path: '/external/v1/deposits',
      status: 200,
      body: '{"code":"ok","message":"OK","data":[],"paging":{}}',
      truncate: true,
    });
    const { body } = await gw.request(QUERY, {}, { key });
    expect(body.data).toEqual({ wallets: { totalCount: 1 }, deposits: null });
    expect(body.errors?.[0]).toMatchObject({
      path: ['deposits'],
      extensions: { code: 'UPSTREAM_UNAVAILABLE' },
    });
    expect(depositCalls()).toHaveLength(3);
  });

  it('a slow drip hits the body timeout: UPSTREAM_TIMEOUT', async () => {
    await fault({
      method: 'GET',
      path: '/external/v1/deposits',
      status: 200,
      body: '{"code":"ok","message":"OK","data":[]}',
      dripMs: 5_000,
    });
    const { body } = await gw.request(QUERY, {}, { key });
    expect(body.errors?.[0]).toMatchObject({
      message: 'The REST API did not answer in time.',
      extensions: { code: 'UPSTREAM_TIMEOUT' },
    });
  });

  it('a body over the size cap is refused: UPSTREAM_ERROR', async () => {
    await fault({
      method: 'GET',
      path: '/external/v1/deposits',
      status: 200,
      body: JSON.stringify({ code: 'ok', data: [], pad: 'x'.repeat(10_000) }),
    });
    const { body } = await gw.request(QUERY, {}, { key });
    expect(body.errors?.[0]).toMatchObject({
      message: 'The REST API answered with an unexpected body: body over the size cap.',
      extensions: { code: 'UPSTREAM_ERROR' },
    });
  });

  it('keeps serving after every fault: no crash, no leaked state', async () => {
    const { body } = await gw.request(QUERY, {}, { key });
    expect(body).toEqual({ data: { wallets: { totalCount: 1 }, deposits: { totalCount: 0 } } });
  });
});

describe('request deadline', () => {
  it('bounds the whole GraphQL request, retries included', async () => {
    // A deadline of 3 s: far above one round trip of a busy machine, far below what ten retries take.
    const tight = await startTestGateway({
      config: { requestDeadlineMs: 3_000 },
      upstream: { headersTimeoutMs: 10_000, retryBaseDelayMs: 100, maxRetries: 10, maxRetryAfterMs: 10_000 },
    });
    try {
      const m = await tight.sandbox.world.merchant();
      // A slow upstream: the deadline, not the 10 s headers timeout, ends the call.
      await tight.sandbox.admin('POST', '/faults', {
        method: 'GET',
        path: '/external/v1/wallets',
        latencyMs: 20_000,
        times: 1,
      });
      const slow = await tight.request('{ wallets(first: 1) { totalCount } }', {}, { key: m.key });
      expect(slow.body.errors?.[0]).toMatchObject({ extensions: { code: 'UPSTREAM_TIMEOUT' } });
      // A failing upstream: ten retries do not fit in 3 s (their backoff alone can take 100 s), so
      // fewer are made.
      tight.resetCalls();
      await tight.sandbox.admin('POST', '/faults', {
        method: 'GET',
        path: '/external/v1/deposits',
        status: 503,
      });
      const failing = await tight.request('{ deposits(first: 1) { totalCount } }', {}, { key: m.key });
      expect(failing.body.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
      expect(tight.upstreamCalls().length).toBeLessThan(11);
      // A Retry-After the gateway would honour (5 s <= UPSTREAM_MAX_RETRY_AFTER_MS) but that ends
      // past the deadline: surfaced at once, no wait, no second call.
      tight.resetCalls();
      await tight.sandbox.admin('DELETE', '/faults');
      await tight.sandbox.admin('POST', '/faults', {
        method: 'GET',
        path: '/external/v1/deposits',
        status: 429,
        headers: { 'retry-after': '5' },
      });
      const limited = await tight.request('{ deposits(first: 1) { totalCount } }', {}, { key: m.key });
      expect(limited.body.errors?.[0]?.extensions).toMatchObject({
        code: 'RATE_LIMITED',
        retryAfterSeconds: 5,
      });
      expect(tight.upstreamCalls()).toHaveLength(1);
    } finally {
      await tight.close();
    }
  });
});
