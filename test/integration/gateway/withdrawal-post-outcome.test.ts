import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MerchantWalletClient } from '../../../src/upstream/client.ts';
import type { WithdrawalPostResult } from '../../../src/upstream/withdrawal-post-result.ts';
import { DEFAULTS } from '../../support/gateway.ts';
import { startTestSandbox, type TestSandbox, withdrawalBody } from '../../support/sandbox.ts';
import { recordSuiteKey } from '../../support/suite-logs.ts';

/**
 * The decision table of MerchantWalletClient.createWithdrawalIntent: each HTTP fact of one POST
 * against the real sandbox (its faults for what a healthy REST API never does), and the outcome
 * the client decides from it. The withdrawal service keeps, forgets or reconciles a key by this
 * outcome alone.
 */

let sandbox: TestSandbox;
let client: MerchantWalletClient;
let key: string;
let walletId: string;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  sandbox.sandbox.idempotencyExtension = false;
  const merchant = await sandbox.world.merchant();
  key = merchant.key;
  recordSuiteKey(key);
  walletId = (await sandbox.world.wallet(merchant.id, { USDT: '1000', TRX: '10' })).id;
  client = new MerchantWalletClient({ ...DEFAULTS.upstream, baseURL: sandbox.url, cacheTtlMs: 0 });
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});
beforeEach(async () => {
  await sandbox.admin('DELETE', '/faults');
  sandbox.sandbox.requests.length = 0;
});

const PATH = '/external/v1/withdrawal-intents';
const fault = (body: Record<string, unknown>) =>
  sandbox.admin('POST', '/faults', { method: 'POST', path: PATH, times: 1, ...body });
const post = (options: { as?: string; maxCalls?: number; amount?: string } = {}) =>
  client.createWithdrawalIntent(
    client.caller(`Bearer ${options.as ?? key}`, { maxCalls: options.maxCalls }),
    withdrawalBody(walletId, { amount: options.amount ?? '1.00' }) as never,
    null,
  );
/** POSTs that reached the sandbox, and the intents they created. */
const reached = () => sandbox.sandbox.requests.filter((r) => r.method === 'POST' && r.path.startsWith(PATH));
const created = () => reached().filter((r) => r.createdId !== null);

/** The parts of a result the table decides: its outcome, and the error's code and upstream answer. */
function decided(result: WithdrawalPostResult) {
  if (result.outcome === 'created') return { outcome: result.outcome, id: result.intent.id };
  const { code, upstream, sent } = result.error.extensions as Record<string, unknown>;
  return {
    outcome: result.outcome,
    code,
    ...(upstream !== undefined && { upstream }),
    ...(sent !== undefined && { sent }),
    ...(result.outcome === 'rejected' && { status: result.status, restCode: result.code }),
  };
}

describe('createWithdrawalIntent: each HTTP fact, one outcome', () => {
  it('a 2xx carrying the intent: created', async () => {
    const result = await post();
    expect(decided(result)).toEqual({ outcome: 'created', id: expect.any(String) });
    expect(created()).toHaveLength(1);
  });

  it('a 4xx business refusal: rejected, with the REST code and the spec message', async () => {
    const result = await post({ amount: '999999.00' });
    expect(decided(result)).toEqual({
      outcome: 'rejected',
      code: 'BAD_USER_INPUT',
      upstream: { status: 400, code: 'withdrawal_intent.balance_insufficient' },
      status: 400,
      restCode: 'withdrawal_intent.balance_insufficient',
    });
    expect(created()).toHaveLength(0);
  });

  it('a 401 of the REST API: rejected (sent, refused, nothing created)', async () => {
    const result = await post({ as: 'not-a-key-of-anyone' });
    expect(decided(result)).toMatchObject({ outcome: 'rejected', code: 'UNAUTHENTICATED', status: 401 });
    expect(reached()).toHaveLength(1);
  });

  it('a 429: rejected as RATE_LIMITED', async () => {
    await fault({ status: 429, headers: { 'retry-after': '30' } });
    expect(decided(await post())).toMatchObject({ outcome: 'rejected', code: 'RATE_LIMITED', status: 429 });
  });

  it.each([
    [500, 'internal_error'],
    [503, 'fault_injected'],
    // A business code on a 5xx says nothing: the POST may have committed before the failure.
    [500, 'withdrawal_intent.balance_insufficient'],
  ])('a %i (code %s): unknown, OUTCOME_UNKNOWN with what the REST API answered', async (status, code) => {
    await fault({ status, body: JSON.stringify({ code, message: 'm', data: null }) });
    expect(decided(await post())).toEqual({
      outcome: 'unknown',
      code: 'OUTCOME_UNKNOWN',
      upstream: { status, code },
    });
  });

  it('a 3xx: unknown', async () => {
    await fault({ status: 302, body: '{}' });
    expect(decided(await post())).toMatchObject({ outcome: 'unknown', upstream: { status: 302 } });
  });

  it('a 2xx whose body is not an intent: unknown', async () => {
    await fault({ status: 201, body: JSON.stringify({ code: 'ok', message: 'OK', data: { no: 'id' } }) });
    expect(decided(await post())).toEqual({
      outcome: 'unknown',
      code: 'OUTCOME_UNKNOWN',
      upstream: { status: 201, code: null },
    });
  });

  it('a connection cut after the REST API created the intent: unknown (and the intent exists)', async () => {
    await fault({ resetAfterRoute: true });
    expect(decided(await post())).toEqual({ outcome: 'unknown', code: 'OUTCOME_UNKNOWN' });
    expect(created()).toHaveLength(1);
  });

  it('a connection reset before any answer: unknown', async () => {
    await fault({ reset: true });
    expect(decided(await post())).toEqual({ outcome: 'unknown', code: 'OUTCOME_UNKNOWN' });
  });

  it('a spent call budget: not_sent, and no POST reached the REST API', async () => {
    expect(decided(await post({ maxCalls: 0 }))).toEqual({
      outcome: 'not_sent',
      code: 'QUERY_LIMIT_EXCEEDED',
      sent: false,
    });
    expect(reached()).toHaveLength(0);
  });

  it("the POST route's circuit open: not_sent, UPSTREAM_UNAVAILABLE, no POST", async () => {
    // A client of its own: its breakers are not the other tests'.
    const tripped = new MerchantWalletClient({
      ...DEFAULTS.upstream,
      baseURL: sandbox.url,
      cacheTtlMs: 0,
      circuitBreaker: { failures: 2, halfOpenAfterMs: 60_000 },
    });
    try {
      await fault({ status: 503, times: 2 });
      const caller = () => tripped.caller(`Bearer ${key}`);
      const body = withdrawalBody(walletId) as never;
      for (let i = 0; i < 2; i++) {
        expect((await tripped.createWithdrawalIntent(caller(), body, null)).outcome).toBe('unknown');
      }
      sandbox.sandbox.requests.length = 0;
      expect(decided(await tripped.createWithdrawalIntent(caller(), body, null))).toMatchObject({
        outcome: 'not_sent',
        code: 'UPSTREAM_UNAVAILABLE',
        sent: false,
      });
      expect(reached()).toHaveLength(0);
    } finally {
      await tripped.close();
    }
  });

  it('a key the REST API refused lately: not_sent, UNAUTHENTICATED, no POST', async () => {
    const refused = 'revoked-or-mistyped-key';
    expect(await client.proveKeyNow(client.caller(`Bearer ${refused}`))).toMatchObject({ kind: 'refused' });
    sandbox.sandbox.requests.length = 0;
    expect(decided(await post({ as: refused }))).toMatchObject({
      outcome: 'not_sent',
      code: 'UNAUTHENTICATED',
      sent: false,
    });
    expect(reached()).toHaveLength(0);
  });
});
