import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { globalIdOf } from '../../../src/schema/global-ids.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { parseMetrics, sampleSum } from '../../support/metrics.ts';
import { withdrawalBody } from '../../support/sandbox.ts';
import { type Result, subscribeSSE } from '../../support/subscriptions.ts';
import { recordSuiteKey } from '../../support/suite-logs.ts';

/**
 * Live withdrawal status over GraphQL over SSE, against the sandbox: its admin transitions are the
 * "events" the REST API never sends, and the gateway's pollers must find them. Polls run every
 * 20 ms here (no backoff) so changes show within a few ticks; nothing waits on a clock, only on
 * results.
 */

const INTENT = `subscription Watch($id: ID!) {
  withdrawalIntentUpdated(id: $id) { id restId status amount updatedAt }
}`;
const INTENTS = `subscription WatchAll($status: [WithdrawalIntentStatus!]) {
  withdrawalIntentsUpdated(status: $status) { restId status }
}`;

let t: TestGateway;
let merchant: { id: string; key: string; readOnlyKey: string };
let walletId: string;

beforeAll(async () => {
  t = await startTestGateway({ config: { subscriptions: { pollMs: 20, maxPollMs: 20, perKey: 150 } } });
  merchant = await t.sandbox.world.merchant();
  recordSuiteKey(merchant.key);
  walletId = (await t.sandbox.world.wallet(merchant.id, { USDT: '100000', TRX: '100' })).id;
});
afterAll(() => t.close());
afterEach(async () => {
  // Every stream a test opened has ended, and so has every poller: nothing outlives its subscribers.
  await expect.poll(() => t.live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
});

async function createIntent(key = merchant.key): Promise<string> {
  const created = await t.sandbox.call('POST', '/external/v1/withdrawal-intents', {
    key,
    body: withdrawalBody(walletId, { amount: '1.00' }),
  });
  expect(created.status).toBe(201);
  return created.body.data.id as string;
}

const intentGets = (id: string) =>
  t.upstreamCalls().filter((call) => call === `GET /external/v1/withdrawal-intents/${id}`).length;

async function pollsCounted(): Promise<number> {
  return sampleSum(parseMetrics((await t.metrics.scrape()).body), 'gateway_subscription_polls_total', {
    feed: 'withdrawal_intent',
  });
}

describe('withdrawalIntentUpdated', () => {
  it('shows the intent as it is, then each transition the sandbox makes, and ends after the final status', async () => {
    const id = await createIntent();
    const stream = await subscribeSSE(
      t.gateway,
      INTENT,
      { id: globalIdOf('WithdrawalIntent', id) },
      merchant.key,
    );
    expect(stream.status).toBe(200);
    const first = await stream.next();
    expect(first).toEqual({
      data: {
        withdrawalIntentUpdated: {
          id: globalIdOf('WithdrawalIntent', id),
          restId: id,
          status: 'PREPARING',
          amount: expect.any(String),
          updatedAt: expect.any(String),
        },
      },
    });
    const seen: string[] = [];
    for (const status of ['reviewing', 'pending', 'completed']) {
      await t.sandbox.world.transitionWithdrawal(id, status);
      const result = (await stream.next()) as Result;
      seen.push(result.data.withdrawalIntentUpdated.status);
    }
    expect(seen).toEqual(['REVIEWING', 'PENDING', 'COMPLETED']);
    // Completed is final: the stream completes by itself.
    expect(await stream.next()).toBeUndefined();
  });

  it('takes a REST id as well, and ends at once with an intent already final', async () => {
    const id = await createIntent();
    await t.sandbox.world.transitionWithdrawal(id, 'cancelled');
    const stream = await subscribeSSE(t.gateway, INTENT, { id }, merchant.key);
    const results = await stream.rest();
    expect(results.map((r) => r.data.withdrawalIntentUpdated.status)).toEqual(['CANCELLED']);
  });

  it('100 subscribers of one intent share one poller: one upstream read per poll, whoever listens', async () => {
    const id = await createIntent();
    t.resetCalls();
    const polledBefore = await pollsCounted();
    const streams = await Promise.all(
      Array.from({ length: 100 }, () => subscribeSSE(t.gateway, INTENT, { id }, merchant.key)),
    );
    const firsts = await Promise.all(streams.map((s) => s.next()));
    expect(firsts.every((r) => r?.data.withdrawalIntentUpdated.status === 'PREPARING')).toBe(true);
    expect(t.live.activity()).toEqual({ subscriptions: 100, pollers: 1 });

    await t.sandbox.world.transitionWithdrawal(id, 'reviewing');
    const seconds = await Promise.all(streams.map((s) => s.next()));
    expect(seconds.every((r) => r?.data.withdrawalIntentUpdated.status === 'REVIEWING')).toBe(true);
    for (const stream of streams) stream.close();
    await expect.poll(() => t.live.activity().pollers).toBe(0);

    // The 100 first reads were one (they shared it), and every other read was one poll (a poll
    // still in flight when the last subscriber left is counted once it returns).
    await expect.poll(async () => intentGets(id) - ((await pollsCounted()) - polledBefore)).toBe(1);
    expect((await pollsCounted()) - polledBefore).toBeGreaterThan(0);
  });

  it('answers an unknown key in the one shape of a refused key: data null, one UNAUTHENTICATED error, no path', async () => {
    const stream = await subscribeSSE(
      t.gateway,
      INTENT,
      { id: await createIntent() },
      'mw_sandbox_not_a_real_key',
    );
    expect(await stream.rest()).toEqual([
      {
        data: null,
        errors: [
          {
            message: 'The API key was not accepted.',
            extensions: { code: 'UNAUTHENTICATED', upstream: { status: 401, code: 'unauthorized' } },
          },
        ],
      },
    ]);
  });

  it('ends with UNAUTHENTICATED once the REST API stops accepting the key (revoked)', async () => {
    const key = await t.sandbox.admin('POST', `/merchants/${merchant.id}/api-keys`, {
      name: 'to revoke',
      access: 'read_only',
    });
    recordSuiteKey(key.key);
    const id = await createIntent();
    const stream = await subscribeSSE(t.gateway, INTENT, { id }, key.key);
    expect((await stream.next())?.data.withdrawalIntentUpdated.status).toBe('PREPARING');
    await t.sandbox.admin('POST', `/api-keys/${key.id}/revoke`);
    const results = await stream.rest();
    expect(results).toEqual([
      {
        data: null,
        errors: [
          // One shape for a refused key, as a request's (without its 401: the stream's status was
          // 200 long ago), with no path.
          {
            message: 'The REST API no longer accepts this API key.',
            extensions: { code: 'UNAUTHENTICATED' },
          },
        ],
      },
    ]);
  });

  it("refuses another merchant's intent with NOT_FOUND, a malformed id with BAD_USER_INPUT and no key with UNAUTHENTICATED, before polling", async () => {
    const malformed = await subscribeSSE(t.gateway, INTENT, { id: 'not an id' }, merchant.key);
    expect(await malformed.rest()).toEqual([
      {
        errors: [
          expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }) }),
        ],
      },
    ]);
    const anonymous = await subscribeSSE(t.gateway, INTENT, { id: 'wi_x' }, null);
    expect((await anonymous.rest())[0]?.errors?.[0].extensions.code).toBe('UNAUTHENTICATED');
    // Another merchant's intent does not exist for this one.
    const other = await t.sandbox.world.merchant();
    recordSuiteKey(other.key);
    const foreign = await subscribeSSE(t.gateway, INTENT, { id: await createIntent() }, other.key);
    expect(await foreign.rest()).toEqual([
      {
        errors: [
          expect.objectContaining({
            message: expect.stringMatching(/^No withdrawal intent \S+ exists for this merchant\.$/),
            path: ['withdrawalIntentUpdated'],
            extensions: expect.objectContaining({ code: 'NOT_FOUND' }),
          }),
        ],
      },
    ]);
  });
});

describe('withdrawalIntentsUpdated', () => {
  it("shows the merchant's new and changed intents, filtered by status when asked", async () => {
    const all = await subscribeSSE(t.gateway, INTENTS, {}, merchant.key);
    const completed = await subscribeSSE(t.gateway, INTENTS, { status: ['COMPLETED'] }, merchant.key);
    // Both subscribers are in (the poller has its first state) before anything happens.
    await expect.poll(() => t.live.activity()).toEqual({ subscriptions: 2, pollers: 1 });
    const id = await createIntent();
    expect((await all.next())?.data.withdrawalIntentsUpdated).toEqual({ restId: id, status: 'PREPARING' });
    for (const status of ['reviewing', 'pending', 'completed']) {
      await t.sandbox.world.transitionWithdrawal(id, status);
      expect((await all.next())?.data.withdrawalIntentsUpdated).toEqual({
        restId: id,
        status: status.toUpperCase(),
      });
    }
    expect((await completed.next())?.data.withdrawalIntentsUpdated).toEqual({
      restId: id,
      status: 'COMPLETED',
    });
    all.close();
    completed.close();
  });
});

describe('limits', () => {
  it('refuses a subscription past SUBSCRIPTIONS_PER_KEY with SUBSCRIPTION_LIMIT_EXCEEDED, and admits one again when another ends', async () => {
    const limited = await startTestGateway({
      config: { subscriptions: { pollMs: 20, maxPollMs: 20, perKey: 2 } },
    });
    try {
      const owner = await limited.sandbox.world.merchant();
      const wallet = await limited.sandbox.world.wallet(owner.id);
      const created = await limited.sandbox.call('POST', '/external/v1/withdrawal-intents', {
        key: owner.key,
        body: withdrawalBody(wallet.id),
      });
      const id = created.body.data.id as string;
      const open = [
        await subscribeSSE(limited.gateway, INTENT, { id }, owner.key),
        await subscribeSSE(limited.gateway, INTENT, { id }, owner.key),
      ];
      for (const stream of open) await stream.next();
      const refused = await subscribeSSE(limited.gateway, INTENT, { id }, owner.key);
      expect(await refused.rest()).toEqual([
        {
          errors: [
            expect.objectContaining({
              extensions: expect.objectContaining({ code: 'SUBSCRIPTION_LIMIT_EXCEEDED', limit: 2 }),
            }),
          ],
        },
      ]);
      // Another key of the same merchant has its own count.
      const other = await subscribeSSE(limited.gateway, INTENT, { id }, owner.readOnlyKey);
      expect((await other.next())?.data.withdrawalIntentUpdated.restId).toBe(id);
      other.close();
      open[0]?.close();
      await expect.poll(() => limited.live.activity().subscriptions).toBe(1);
      const again = await subscribeSSE(limited.gateway, INTENT, { id }, owner.key);
      expect((await again.next())?.data.withdrawalIntentUpdated.restId).toBe(id);
      again.close();
      open[1]?.close();
      await expect.poll(() => limited.live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
    } finally {
      await limited.close();
    }
  });
});
