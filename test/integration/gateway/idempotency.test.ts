import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CreateWithdrawalDocument, type CreateWithdrawalMutationVariables } from '../../generated/graphql.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { closeWithoutLeaks } from '../../support/leaks.ts';
import { EXTERNAL_TRON_ADDRESS } from '../../support/sandbox.ts';

let gw: TestGateway;
// No socket, server or timer may outlive this file, and no call or timer its request.
closeWithoutLeaks(() => gw);
beforeAll(async () => {
  // A timeout far above any answer of a busy machine, so only the late answers below (3 s) miss it.
  gw = await startTestGateway({ upstream: { headersTimeoutMs: 1_000 } });
});
beforeEach(() => gw.resetCalls());

/** createWithdrawalIntent's input: 25 USDT from `wallet` to an external address. */
const inputFrom = (
  wallet: { id: string },
  overrides: Partial<CreateWithdrawalMutationVariables['input']> = {},
) =>
  ({
    walletId: wallet.id,
    serviceFeeMode: 'EXCLUSIVE',
    currencyCode: 'USDT',
    amount: '25.00',
    destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS },
    ...overrides,
  }) as CreateWithdrawalMutationVariables['input'];

async function merchant() {
  const m = await gw.sandbox.world.merchant();
  const wallet = await gw.sandbox.world.wallet(m.id, { USDT: '10000', TRX: '0' });
  const create = (overrides: Partial<CreateWithdrawalMutationVariables['input']> = {}) =>
    gw.run(CreateWithdrawalDocument, { input: inputFrom(wallet, overrides) }, m.key);
  const intents = async () =>
    (await gw.sandbox.call('GET', '/external/v1/withdrawal-intents?size=1000', { key: m.key })).body.data as {
      id: string;
    }[];
  return { m, wallet, create, intents };
}

const intentId = (r: { body: { data?: unknown } }) =>
  (r.body.data as { createWithdrawalIntent?: { withdrawalIntent?: { id: string } } } | null)
    ?.createWithdrawalIntent?.withdrawalIntent?.id;
const posts = () => gw.upstreamCalls().filter((c) => c.startsWith('POST'));

describe('idempotent withdrawals', () => {
  it('500 concurrent submissions with one key create exactly one intent', async () => {
    const { create, intents } = await merchant();
    const results = await Promise.all(
      Array.from({ length: 500 }, () => create({ idempotencyKey: 'burst-1' })),
    );
    const ids = new Set(results.map(intentId));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^[A-Za-z0-9+/=]+$/);
    expect(posts()).toHaveLength(1);
    expect(await intents()).toHaveLength(1);
  });

  it('replays the result later, and refuses the same key with another input, never sending it again', async () => {
    const { create, intents } = await merchant();
    const first = await create({ idempotencyKey: 'k-replay' });
    gw.resetCalls();
    const again = await create({ idempotencyKey: 'k-replay' });
    expect(intentId(again)).toBe(intentId(first));
    const other = await create({ idempotencyKey: 'k-replay', amount: '26.00' });
    expect(other.body.data?.createWithdrawalIntent).toMatchObject({
      __typename: 'IdempotencyKeyReusedError',
      code: 'idempotency_key_reused',
    });
    // Each answer from the record first asks the REST API whether the key is still accepted.
    expect(gw.upstreamCalls()).toEqual([
      'GET /external/v1/wallets?page=1&size=1',
      'GET /external/v1/wallets?page=1&size=1',
    ]);
    expect(await intents()).toHaveLength(1);
  });

  it('replays a business refusal without sending it again, asking only whether the key is accepted', async () => {
    const { create } = await merchant();
    const refused = await create({ idempotencyKey: 'k-poor', amount: '99999.00' });
    expect(refused.body.data?.createWithdrawalIntent).toMatchObject({
      __typename: 'BalanceInsufficientError',
    });
    gw.resetCalls();
    const again = await create({ idempotencyKey: 'k-poor', amount: '99999.00' });
    expect(again.body.data?.createWithdrawalIntent).toEqual(refused.body.data?.createWithdrawalIntent);
    expect(gw.upstreamCalls()).toEqual(['GET /external/v1/wallets?page=1&size=1']);
  });

  it('replays every kind of refusal exactly as it was first answered, every field included', async () => {
    const PAYLOAD = `mutation Withdraw($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) {
      __typename ... on UserError { code message } ... on DataInvalidError { field } } }`;
    const payload = (answer: { body: { data?: unknown } }) =>
      (answer.body.data as { createWithdrawalIntent: { __typename: string; field?: string[] | null } })
        .createWithdrawalIntent;
    const world = gw.sandbox.world;
    const limited = async (config: { fee: string; dailyLimit: string; monthlyLimit: string } | null) => {
      const m = await world.merchant(config);
      return { key: m.key, wallet: await world.wallet(m.id, { USDT: '10000', TRX: '0' }) };
    };
    const plain = await limited({ fee: '1', dailyLimit: '100000', monthlyLimit: '1000000' });
    const daily = await limited({ fee: '1', dailyLimit: '50', monthlyLimit: '1000000' });
    const monthly = await limited({ fee: '1', dailyLimit: '100000', monthlyLimit: '50' });
    const unconfigured = await limited(null);
    const other = await limited({ fee: '1', dailyLimit: '100000', monthlyLimit: '1000000' });
    const cases = [
      ['DataInvalidError', plain, inputFrom(other.wallet, {})],
      ['WithdrawalConfigIncompleteError', unconfigured, inputFrom(unconfigured.wallet, {})],
      [
        'DestinationInternalError',
        plain,
        inputFrom(plain.wallet, {
          destination: { type: 'crypto', rail: 'tron', identifier: other.wallet.networkEndpoint.identifier },
        }),
      ],
      [
        'ServiceFeeNotCoveredError',
        plain,
        inputFrom(plain.wallet, { amount: '0.50', serviceFeeMode: 'INCLUSIVE' }),
      ],
      ['BalanceInsufficientError', plain, inputFrom(plain.wallet, { amount: '99999.00' })],
      ['DailyLimitExceededError', daily, inputFrom(daily.wallet, { amount: '60.00' })],
      ['MonthlyLimitExceededError', monthly, inputFrom(monthly.wallet, { amount: '60.00' })],
    ] as const;
    for (const [type, who, body] of cases) {
      const keyed = { ...body, idempotencyKey: `k-replay-${type}` };
      const first = await gw.request(PAYLOAD, { input: keyed }, { key: who.key });
      expect(payload(first).__typename, type).toBe(type);
      gw.resetCalls();
      const again = await gw.request(PAYLOAD, { input: keyed }, { key: who.key });
      expect(again.body, type).toEqual(first.body);
      expect(posts(), type).toEqual([]);
    }
    // The field that DataInvalidError names survives the replay.
    const replayed = await gw.request(
      PAYLOAD,
      { input: { ...inputFrom(other.wallet, {}), idempotencyKey: 'k-replay-DataInvalidError' } },
      { key: plain.key },
    );
    expect(payload(replayed).field).toEqual(['input', 'walletId']);
  });

  it('reconciles after a timeout that happened after the upstream created the intent: exactly one intent', async () => {
    const { create, intents } = await merchant();
    // An identical intent made earlier under another key must not be mistaken for this one.
    const earlier = await create({ idempotencyKey: 'k-earlier' });
    // The REST API takes longer than the gateway waits, then creates the intent anyway.
    await gw.sandbox.admin('POST', '/faults', {
      method: 'POST',
      path: '/external/v1/withdrawal-intents',
      respondAfterMs: 3_000,
      times: 1,
    });
    const timedOut = await create({ idempotencyKey: 'k-timeout' });
    expect(timedOut.body.errors?.[0]?.extensions).toMatchObject({
      code: 'OUTCOME_UNKNOWN',
      idempotencyKey: 'k-timeout',
    });
    expect(await intents()).toHaveLength(2);
    gw.resetCalls();
    const replay = await create({ idempotencyKey: 'k-timeout' });
    const created = (await intents()).map((i) => i.id);
    expect(created).toHaveLength(2);
    const replayed = replay.body.data?.createWithdrawalIntent as { withdrawalIntent: { restId: string } };
    expect(created).toContain(replayed.withdrawalIntent.restId);
    expect(intentId(replay)).not.toBe(intentId(earlier));
    // Reconciled from the list: no second POST.
    expect(posts()).toEqual([]);
  });

  it('without a key, an unknown outcome is never retried', async () => {
    const { create, intents } = await merchant();
    await gw.sandbox.admin('POST', '/faults', {
      method: 'POST',
      path: '/external/v1/withdrawal-intents',
      respondAfterMs: 3_000,
      times: 1,
    });
    const result = await create();
    expect(result.body.errors?.[0]?.extensions).toMatchObject({
      code: 'OUTCOME_UNKNOWN',
      idempotencyKey: null,
    });
    expect(posts()).toHaveLength(1);
    expect(await intents()).toHaveLength(1);
  });
});
