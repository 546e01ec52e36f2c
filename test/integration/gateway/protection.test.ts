import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { closeWithoutLeaks } from '../../support/leaks.ts';
import { EXTERNAL_TRON_ADDRESS } from '../../support/sandbox.ts';

/**
 * The gateway protects the REST API when it struggles: a circuit breaker per route template, and a
 * budget of upstream calls per GraphQL request. And it tells HTTP clients the truth when a whole
 * operation failed that way. Calls are counted at the sandbox.
 */

let gw: TestGateway;
let key: string;
let walletId: string;
const GRAPHQL_RESPONSE = { accept: 'application/graphql-response+json' };
const HALF_OPEN_AFTER_MS = 5_000;

closeWithoutLeaks(() => gw);
beforeAll(async () => {
  gw = await startTestGateway({
    // A timeout far above any answer of a busy machine, so only the hanging calls time out.
    upstream: {
      circuitBreaker: { failures: 3, halfOpenAfterMs: HALF_OPEN_AFTER_MS },
      headersTimeoutMs: 1_500,
    },
    config: { maxUpstreamCallsPerRequest: 3 },
  });
  const merchant = await gw.sandbox.world.merchant();
  key = merchant.key;
  walletId = (await gw.sandbox.world.wallet(merchant.id)).id;
});
beforeEach(() => gw.resetCalls());
afterEach(() => {
  vi.useRealTimers();
});

const fault = (body: Record<string, unknown>) => gw.sandbox.admin('POST', '/faults', body);
const callsTo = (prefix: string) => gw.upstreamCalls().filter((c) => c.startsWith(prefix)).length;
/** Moves the clock the breakers read (Date.now) forward, without sleeping. */
function advanceClock(ms: number): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + ms);
}

describe('circuit breaker', () => {
  it('opens after a 503 storm, fails fast with a retry delay, half-opens, and closes on recovery', async () => {
    await fault({ method: 'GET', path: '/external/v1/deposits?', status: 503 });
    const first = await gw.request('{ deposits(first: 1) { totalCount } }', {}, { key });
    // One request: the first attempt and its two retries, three failures in a row: the circuit opens.
    expect(callsTo('GET /external/v1/deposits?')).toBe(3);
    expect(first.body.errors?.[0]?.extensions).toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      upstream: { status: 503 },
    });

    const refused = await gw.request(
      '{ deposits(first: 1) { totalCount } wallets(first: 1) { totalCount } }',
      {},
      { key },
    );
    // Refused without a call, the retries included; another route is not affected.
    expect(callsTo('GET /external/v1/deposits?')).toBe(3);
    expect(refused.body.data).toEqual({ deposits: null, wallets: { totalCount: 1 } });
    expect(refused.body.errors).toEqual([
      {
        message:
          'The REST API is failing on GET /deposits; the gateway is not calling it for now. Retry later.',
        locations: [{ line: 1, column: 3 }],
        path: ['deposits'],
        extensions: {
          code: 'UPSTREAM_UNAVAILABLE',
          circuit: 'open',
          retryAfterSeconds: HALF_OPEN_AFTER_MS / 1000,
        },
      },
    ]);
    expect(gw.client.circuits()).toMatchObject({ 'GET /deposits': 'open', 'GET /wallets': 'closed' });

    // A whole operation refused by an open circuit: 503 with Retry-After, for graphql-response+json.
    const whole = await gw.request(
      '{ deposits(first: 1) { totalCount } }',
      {},
      { key, headers: GRAPHQL_RESPONSE },
    );
    expect(whole.status).toBe(503);
    expect(Number(whole.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(whole.headers.get('retry-after'))).toBeLessThanOrEqual(HALF_OPEN_AFTER_MS / 1000);
    const asJson = await gw.request(
      '{ deposits(first: 1) { totalCount } }',
      {},
      { key, headers: { accept: 'application/json' } },
    );
    expect(asJson.status).toBe(200);
    expect(asJson.headers.get('retry-after')).toBeNull();

    // Half-open: still failing, one probe goes through and the circuit opens again.
    advanceClock(HALF_OPEN_AFTER_MS + 1);
    await gw.request('{ deposits(first: 1) { totalCount } }', {}, { key });
    expect(callsTo('GET /external/v1/deposits?')).toBe(4);
    expect(gw.client.circuits()['GET /deposits']).toBe('open');
    await gw.request('{ deposits(first: 1) { totalCount } }', {}, { key });
    expect(callsTo('GET /external/v1/deposits?')).toBe(4);

    // Recovered: the next probe succeeds and closes the circuit.
    await gw.sandbox.admin('DELETE', '/faults');
    advanceClock(HALF_OPEN_AFTER_MS + 1);
    const probe = await gw.request('{ deposits(first: 1) { totalCount } }', {}, { key });
    expect(probe.body).toEqual({ data: { deposits: { totalCount: 0 } } });
    expect(gw.client.circuits()['GET /deposits']).toBe('closed');
    await gw.request('{ deposits(first: 1) { totalCount } }', {}, { key });
    expect(callsTo('GET /external/v1/deposits?')).toBe(6);
  });

  it('counts timeouts and resets, not 4xx answers', async () => {
    await fault({
      method: 'GET',
      path: '/external/v1/withdrawal-intents?',
      status: 400,
      body: '{"code":"bad_request","message":"no","data":null}',
    });
    for (let i = 0; i < 4; i++)
      await gw.request('{ withdrawalIntents(first: 1) { totalCount } }', {}, { key });
    expect(gw.client.circuits()['GET /withdrawal-intents']).toBe('closed');
    await gw.sandbox.admin('DELETE', '/faults');
    await fault({ method: 'GET', path: '/external/v1/withdrawal-intents?', hang: true, times: 1 });
    await fault({ method: 'GET', path: '/external/v1/withdrawal-intents?', reset: true });
    await gw.request('{ withdrawalIntents(first: 1) { totalCount } }', {}, { key });
    // The timeout ended its request (no retry after a timeout); a reset and its retries follow.
    await gw.request('{ withdrawalIntents(first: 1) { totalCount } }', {}, { key });
    expect(gw.client.circuits()['GET /withdrawal-intents']).toBe('open');
    advanceClock(HALF_OPEN_AFTER_MS + 1);
    await gw.sandbox.admin('DELETE', '/faults');
    await gw.request('{ withdrawalIntents(first: 1) { totalCount } }', {}, { key });
    expect(gw.client.circuits()['GET /withdrawal-intents']).toBe('closed');
  });

  it('refuses a withdrawal on an open circuit before sending it: a definite failure, not OUTCOME_UNKNOWN', async () => {
    await fault({ method: 'POST', path: '/external/v1/withdrawal-intents', status: 503 });
    const mutation = `mutation($input: CreateWithdrawalIntentInput!) {
      createWithdrawalIntent(input: $input) { __typename ... on CreateWithdrawalIntentSuccess { withdrawalIntent { restId } } }
    }`;
    const input = (n: number) => ({
      walletId,
      serviceFeeMode: 'EXCLUSIVE',
      currencyCode: 'USDT',
      amount: '1.00',
      destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS },
      idempotencyKey: `breaker-${n}`,
    });
    for (let n = 0; n < 3; n++) {
      const sent = await gw.request(mutation, { input: input(n) }, { key });
      expect(sent.body.errors?.[0]?.extensions?.code).toBe('OUTCOME_UNKNOWN');
    }
    expect(callsTo('POST /external/v1/withdrawal-intents')).toBe(3);
    const refused = await gw.request(mutation, { input: input(3) }, { key });
    expect(callsTo('POST /external/v1/withdrawal-intents')).toBe(3);
    expect(refused.body.errors?.[0]).toMatchObject({
      message: expect.stringMatching(/^The withdrawal was not sent, so nothing was created: /),
      extensions: {
        code: 'UPSTREAM_UNAVAILABLE',
        circuit: 'open',
        sent: false,
        retryAfterSeconds: HALF_OPEN_AFTER_MS / 1000,
      },
    });
    await gw.sandbox.admin('DELETE', '/faults');
    advanceClock(HALF_OPEN_AFTER_MS + 1);
    const recovered = await gw.request(mutation, { input: input(3) }, { key });
    expect(recovered.body.data?.createWithdrawalIntent).toMatchObject({
      __typename: 'CreateWithdrawalIntentSuccess',
    });
  });
});

describe('upstream call budget', () => {
  it('fails the fields past MAX_UPSTREAM_CALLS_PER_REQUEST with QUERY_LIMIT_EXCEEDED; the rest keep their data', async () => {
    const { body } = await gw.request(
      `{ a: deposits(first: 1) { totalCount } b: deposits(first: 2) { totalCount }
         c: withdrawalIntents(first: 1) { totalCount } d: wallets(first: 1) { totalCount } }`,
      {},
      { key },
    );
    // Four distinct REST calls were needed; exactly three were made.
    expect(gw.upstreamCalls()).toHaveLength(3);
    expect(body.errors).toHaveLength(1);
    expect(body.errors?.[0]).toMatchObject({
      extensions: { code: 'QUERY_LIMIT_EXCEEDED', maxUpstreamCalls: 3 },
    });
    const failed = body.errors?.[0]?.path?.[0] as string;
    expect(
      Object.entries(body.data ?? {})
        .filter(([, v]) => v === null)
        .map(([k]) => k),
    ).toEqual([failed]);
  });

  it('counts retries; identical calls of one request cost one', async () => {
    await fault({ method: 'GET', path: '/external/v1/wallets?', status: 502, times: 2 });
    const retried = await gw.request(
      '{ a: wallets(first: 1) { totalCount } b: wallets(first: 1) { totalCount } }',
      {},
      { key },
    );
    // Two failed attempts and the one that answered: the whole budget, shared by both aliases.
    expect(callsTo('GET /external/v1/wallets?')).toBe(3);
    expect(retried.body).toEqual({ data: { a: { totalCount: 1 }, b: { totalCount: 1 } } });

    gw.resetCalls();
    await fault({ method: 'GET', path: '/external/v1/wallets?', status: 502, times: 1 });
    const spent = await gw.request(
      '{ wallets(first: 1) { totalCount } deposits(first: 1) { totalCount } withdrawalIntents(first: 1) { totalCount } }',
      {},
      { key },
    );
    // The three first attempts use the budget; the wallets retry finds it spent.
    expect(gw.upstreamCalls()).toHaveLength(3);
    expect(spent.body.data).toEqual({
      wallets: null,
      deposits: { totalCount: expect.any(Number) },
      withdrawalIntents: { totalCount: expect.any(Number) },
    });
    expect(spent.body.errors?.[0]).toMatchObject({
      path: ['wallets'],
      extensions: { code: 'QUERY_LIMIT_EXCEEDED' },
    });
  });
});

describe('HTTP status of a wholly failed operation', () => {
  const QUERY = '{ wallets(first: 1) { totalCount } deposits(first: 1) { totalCount } }';

  it('429 with the REST API Retry-After when every root field was rate limited (graphql-response+json only)', async () => {
    await fault({ method: 'GET', path: '/external/v1/', status: 429, headers: { 'retry-after': '30' } });
    const strict = await gw.request(QUERY, {}, { key, headers: GRAPHQL_RESPONSE });
    expect(strict.status).toBe(429);
    expect(strict.headers.get('retry-after')).toBe('30');
    expect(strict.body.errors?.map((e: { extensions: { code: string } }) => e.extensions.code)).toEqual([
      'RATE_LIMITED',
      'RATE_LIMITED',
    ]);
    const json = await gw.request(QUERY, {}, { key, headers: { accept: 'application/json' } });
    expect(json.status).toBe(200);
  });

  it('504 when every root field timed out; 200 when only some failed', async () => {
    await fault({ method: 'GET', path: '/external/v1/', hang: true });
    const strict = await gw.request(QUERY, {}, { key, headers: GRAPHQL_RESPONSE });
    expect(strict.status).toBe(504);
    expect(strict.headers.get('retry-after')).toBeNull();
    await gw.sandbox.admin('DELETE', '/faults');
    await fault({ method: 'GET', path: '/external/v1/deposits', hang: true });
    const partial = await gw.request(QUERY, {}, { key, headers: GRAPHQL_RESPONSE });
    expect(partial.status).toBe(200);
    expect(partial.body.data).toEqual({ wallets: { totalCount: 1 }, deposits: null });
  });
});
