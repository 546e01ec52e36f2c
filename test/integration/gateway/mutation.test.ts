import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CreateWithdrawalDocument, type CreateWithdrawalMutationVariables } from '../../generated/graphql.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { EXTERNAL_TRON_ADDRESS, usdt } from '../../support/sandbox.ts';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
beforeEach(() => gw.resetCalls());
afterEach(() => gw.sandbox.admin('DELETE', '/faults'));
afterAll(() => gw.close());

async function merchantWithWallet(
  config: { fee: string; dailyLimit: string; monthlyLimit: string } | null = {
    fee: '2.5',
    dailyLimit: '1000',
    monthlyLimit: '5000',
  },
  balances = { USDT: '100', TRX: '10' },
) {
  const merchant = await gw.sandbox.world.merchant(config);
  const wallet = await gw.sandbox.world.wallet(merchant.id, balances);
  return { merchant, wallet };
}

function input(walletId: string, overrides: Partial<CreateWithdrawalMutationVariables['input']> = {}) {
  return {
    walletId,
    serviceFeeMode: 'EXCLUSIVE',
    currencyCode: 'USDT',
    amount: '10.00',
    destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS },
    ...overrides,
  } as CreateWithdrawalMutationVariables['input'];
}

const posts = () => gw.upstreamCalls().filter((c) => c.startsWith('POST'));

describe('createWithdrawalIntent', () => {
  it('creates an intent (exclusive fee on top) and the wallet shows the lock', async () => {
    const { merchant, wallet } = await merchantWithWallet();
    const globalWalletId = Buffer.from(`Wallet:${wallet.id}`).toString('base64');
    const { body } = await gw.run(CreateWithdrawalDocument, { input: input(globalWalletId) }, merchant.key);
    expect(body.errors).toBeUndefined();
    const result = body.data?.createWithdrawalIntent;
    expect(result).toMatchObject({
      __typename: 'CreateWithdrawalIntentSuccess',
      withdrawalIntent: {
        status: 'PREPARING',
        serviceFeeMode: 'EXCLUSIVE',
        amount: '10.0000000000000000',
        amountFee: '2.5000000000000000',
        amountNet: '10.0000000000000000',
        amountGross: '12.5000000000000000',
        transaction: null,
        finalizedAt: null,
      },
    });
    const rest = await gw.sandbox.call('GET', `/external/v1/wallets/${wallet.id}`, { key: merchant.key });
    expect(usdt(rest.body.data)).toEqual({
      availableAmount: '87.5000000000000000',
      lockedAmount: '12.5000000000000000',
    });
  });

  it('inclusive: the fee comes out of the amount; REST ids work too; reads after it see new balances', async () => {
    const { merchant, wallet } = await merchantWithWallet();
    const { body } = await gw.request(
      `mutation($input: CreateWithdrawalIntentInput!) {
        createWithdrawalIntent(input: $input) { ... on CreateWithdrawalIntentSuccess { withdrawalIntent { amountNet amountGross wallet { asset(currencyCode: "USDT") { balance { availableAmount lockedAmount } } } } } }
      }`,
      { input: input(wallet.id, { serviceFeeMode: 'INCLUSIVE' as never, amount: '40' }) },
      { key: merchant.key },
    );
    expect(body).toEqual({
      data: {
        createWithdrawalIntent: {
          withdrawalIntent: {
            amountNet: '37.5000000000000000',
            amountGross: '40.0000000000000000',
            wallet: {
              asset: {
                balance: { availableAmount: '60.0000000000000000', lockedAmount: '40.0000000000000000' },
              },
            },
          },
        },
      },
    });
  });

  it.each([
    ['withdrawal_intent.config_incomplete', 'WithdrawalConfigIncompleteError', null, {}],
    [
      'withdrawal_intent.service_fee_not_covered',
      'ServiceFeeNotCoveredError',
      undefined,
      { serviceFeeMode: 'INCLUSIVE', amount: '2.50' },
    ],
    ['withdrawal_intent.balance_insufficient', 'BalanceInsufficientError', undefined, { amount: '97.51' }],
    [
      'withdrawal_intent.daily_limit_exceeded',
      'DailyLimitExceededError',
      { fee: '0', dailyLimit: '5', monthlyLimit: '50' },
      {},
    ],
    [
      'withdrawal_intent.monthly_limit_exceeded',
      'MonthlyLimitExceededError',
      { fee: '0', dailyLimit: '50', monthlyLimit: '5' },
      {},
    ],
  ])('returns %s as %s, changing nothing', async (code, typename, config, overrides) => {
    const { merchant, wallet } = await merchantWithWallet(config === undefined ? undefined : config);
    const { body } = await gw.run(
      CreateWithdrawalDocument,
      { input: input(wallet.id, overrides as Partial<CreateWithdrawalMutationVariables['input']>) },
      merchant.key,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.createWithdrawalIntent).toMatchObject({ __typename: typename, code });
    expect(body.data?.createWithdrawalIntent).toHaveProperty('message', expect.stringMatching(/\w/));
    const rest = await gw.sandbox.call('GET', `/external/v1/wallets/${wallet.id}`, { key: merchant.key });
    expect(usdt(rest.body.data).lockedAmount).toBe('0.0000000000000000');
  });

  it('returns destination_internal for a platform address', async () => {
    const { merchant, wallet } = await merchantWithWallet();
    const identifier = wallet.networkEndpoint.identifier;
    const { body } = await gw.run(
      CreateWithdrawalDocument,
      { input: input(wallet.id, { destination: { type: 'crypto', rail: 'tron', identifier } }) },
      merchant.key,
    );
    expect(body.data?.createWithdrawalIntent).toMatchObject({
      __typename: 'DestinationInternalError',
      code: 'withdrawal_intent.destination_internal',
    });
  });

  it.each([
    [
      { amount: '1.234' },
      ['input', 'amount'],
      'amount must be positive with at most 2 decimal places; received "1.234"',
    ],
    [
      { amount: '0.00' },
      ['input', 'amount'],
      'amount must be positive with at most 2 decimal places; received "0.00"',
    ],
    [
      { currencyCode: 'TRX' },
      ['input', 'currencyCode'],
      'currencyCode must be USDT (the only currency allowed); received "TRX"',
    ],
    [
      { destination: { type: 'bank', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS } },
      ['input', 'destination', 'type'],
      'destination.type must be crypto (the only type allowed)',
    ],
    [
      { destination: { type: 'crypto', rail: 'eth', identifier: EXTERNAL_TRON_ADDRESS } },
      ['input', 'destination', 'rail'],
      'destination.rail must be tron (the only rail allowed)',
    ],
    [
      { idempotencyKey: '' },
      ['input', 'idempotencyKey'],
      'idempotencyKey must be 1 to 255 printable ASCII characters',
    ],
    [
      { walletId: Buffer.from('Deposit:x').toString('base64') },
      ['input', 'walletId'],
      'input.walletId is the global id of a Deposit, not of a Wallet',
    ],
  ])(
    'validates %j in the gateway as DataInvalidError with the field path, without an upstream call',
    async (overrides, field, message) => {
      const { merchant, wallet } = await merchantWithWallet();
      gw.resetCalls();
      const { body } = await gw.run(
        CreateWithdrawalDocument,
        { input: input(wallet.id, overrides as never) },
        merchant.key,
      );
      expect(body.data?.createWithdrawalIntent).toEqual({
        __typename: 'DataInvalidError',
        code: 'data_invalid',
        message,
        field,
      });
      expect(gw.upstreamCalls()).toEqual([]);
    },
  );

  it('checks the Tron address checksum in the gateway', async () => {
    const { merchant, wallet } = await merchantWithWallet();
    gw.resetCalls();
    const { body } = await gw.run(
      CreateWithdrawalDocument,
      {
        input: input(wallet.id, {
          destination: { type: 'crypto', rail: 'tron', identifier: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU8' },
        }),
      },
      merchant.key,
    );
    expect(body.data?.createWithdrawalIntent).toMatchObject({
      __typename: 'DestinationInvalidError',
      code: 'withdrawal_intent.destination_invalid',
    });
    // Nothing was sent; the wallet was looked up, because the REST API names an unknown wallet first.
    expect(gw.upstreamCalls()).toEqual([`GET /external/v1/wallets/${wallet.id}`]);
  });

  it('names an unknown wallet before a bad address, as the REST API would', async () => {
    const { merchant } = await merchantWithWallet();
    const { wallet: foreign } = await merchantWithWallet();
    gw.resetCalls();
    const { body } = await gw.run(
      CreateWithdrawalDocument,
      {
        input: input(foreign.id, {
          destination: { type: 'crypto', rail: 'tron', identifier: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU8' },
        }),
      },
      merchant.key,
    );
    expect(body.data?.createWithdrawalIntent).toEqual({
      __typename: 'DataInvalidError',
      code: 'data_invalid',
      message: `input.walletId must be the id of one of your wallets; received "${foreign.id}"`,
      field: ['input', 'walletId'],
    });
    expect(gw.upstreamCalls().filter((c) => c.startsWith('POST'))).toEqual([]);
  });

  it("maps the REST API's data_invalid (another merchant's wallet) to DataInvalidError", async () => {
    const { merchant } = await merchantWithWallet();
    const { wallet: foreign } = await merchantWithWallet();
    const { body } = await gw.run(CreateWithdrawalDocument, { input: input(foreign.id) }, merchant.key);
    // In the GraphQL input's names: the REST API's message speaks of senderWalletId.
    expect(body.data?.createWithdrawalIntent).toEqual({
      __typename: 'DataInvalidError',
      code: 'data_invalid',
      message: `input.walletId must be the id of one of your wallets; received "${foreign.id}"`,
      field: ['input', 'walletId'],
    });
  });

  it('rejects a Decimal sent as a number at the schema level', async () => {
    const { merchant, wallet } = await merchantWithWallet();
    const { body } = await gw.request(
      'mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename } }',
      { input: { ...input(wallet.id), amount: 10.1 } },
      { key: merchant.key },
    );
    expect(body.errors?.[0]?.message).toContain('Decimal must be a string of digits');
  });

  it('forwards idempotencyKey: a replay returns the same intent and creates nothing new', async () => {
    const { merchant, wallet } = await merchantWithWallet();
    const variables = { input: input(wallet.id, { idempotencyKey: 'checkout-42' }) };
    const first = await gw.run(CreateWithdrawalDocument, variables, merchant.key);
    const second = await gw.run(CreateWithdrawalDocument, variables, merchant.key);
    const id = (r: typeof first) =>
      (r.body.data?.createWithdrawalIntent as { withdrawalIntent?: { id: string } } | undefined)
        ?.withdrawalIntent?.id;
    expect(id(second)).toBe(id(first));
    const reused = await gw.run(
      CreateWithdrawalDocument,
      { input: input(wallet.id, { idempotencyKey: 'checkout-42', amount: '11' }) },
      merchant.key,
    );
    expect(reused.body.data?.createWithdrawalIntent).toMatchObject({
      __typename: 'IdempotencyKeyReusedError',
      code: 'idempotency_key_reused',
    });
    const list = await gw.sandbox.call('GET', '/external/v1/withdrawal-intents', { key: merchant.key });
    expect(list.body.paging.totalCount).toBe(1);
  });

  it('never retries the POST: a 503 after sending is OUTCOME_UNKNOWN carrying the idempotency key', async () => {
    const { merchant, wallet } = await merchantWithWallet();
    await gw.sandbox.admin('POST', '/faults', {
      method: 'POST',
      path: '/external/v1/withdrawal-intents',
      status: 503,
      times: 1,
    });
    const { body } = await gw.run(
      CreateWithdrawalDocument,
      { input: input(wallet.id, { idempotencyKey: 'k-1' }) },
      merchant.key,
    );
    expect(body.data).toBeNull();
    expect(body.errors).toEqual([
      expect.objectContaining({
        message:
          'The withdrawal may or may not have been created. Retry with the same idempotencyKey to get its outcome.',
        path: ['createWithdrawalIntent'],
        extensions: {
          code: 'OUTCOME_UNKNOWN',
          idempotencyKey: 'k-1',
          upstream: { status: 503, code: 'fault_injected' },
        },
      }),
    ]);
    expect(posts()).toHaveLength(1);
  });

  it('a 5xx naming a business refusal is still OUTCOME_UNKNOWN: the key is not kept as refused', async () => {
    const { merchant, wallet } = await merchantWithWallet();
    await gw.sandbox.admin('POST', '/faults', {
      method: 'POST',
      path: '/external/v1/withdrawal-intents',
      status: 500,
      body: JSON.stringify({ code: 'withdrawal_intent.balance_insufficient', message: 'm', data: null }),
      times: 1,
    });
    const variables = { input: input(wallet.id, { idempotencyKey: 'k-500-business' }) };
    const first = await gw.run(CreateWithdrawalDocument, variables, merchant.key);
    expect(first.body.errors?.[0]?.extensions).toEqual({
      code: 'OUTCOME_UNKNOWN',
      idempotencyKey: 'k-500-business',
      upstream: { status: 500, code: 'withdrawal_intent.balance_insufficient' },
    });
    expect(first.body.data).toBeNull();
    expect(posts()).toHaveLength(1);
  });

  it('never retries the POST after a connection reset either', async () => {
    const { merchant, wallet } = await merchantWithWallet();
    await gw.sandbox.admin('POST', '/faults', {
      method: 'POST',
      path: '/external/v1/withdrawal-intents',
      reset: true,
      times: 1,
    });
    const { body } = await gw.run(CreateWithdrawalDocument, { input: input(wallet.id) }, merchant.key);
    expect(body.errors?.[0]?.extensions).toEqual({ code: 'OUTCOME_UNKNOWN', idempotencyKey: null });
    expect(posts()).toHaveLength(1);
  });

  it('maps a read-only key to FORBIDDEN with HTTP 403', async () => {
    const { merchant, wallet } = await merchantWithWallet();
    const response = await gw.run(
      CreateWithdrawalDocument,
      { input: input(wallet.id) },
      merchant.readOnlyKey,
    );
    expect(response.status).toBe(403);
    expect(response.body.errors?.[0]?.extensions).toEqual({
      code: 'FORBIDDEN',
      upstream: { status: 403, code: 'forbidden' },
    });
  });
});

describe('a data_invalid naming no field, then a failed wallet GET', () => {
  it("answers the POST's own refusal (nothing created), not the wallet GET's outage, and keeps nothing for the key", async () => {
    const merchant = await gw.sandbox.world.merchant();
    const wallet = await gw.sandbox.world.wallet(merchant.id, { USDT: '100', TRX: '10' });
    await gw.sandbox.admin('POST', '/faults', {
      method: 'POST',
      path: '/external/v1/withdrawal-intents',
      status: 400,
      body: JSON.stringify({ code: 'data_invalid', message: 'senderWalletId is invalid', data: null }),
      times: 1,
    });
    await gw.sandbox.admin('POST', '/faults', {
      method: 'GET',
      path: `/external/v1/wallets/${wallet.id}`,
      status: 503,
      times: null,
    });
    const variables = {
      input: {
        walletId: wallet.id,
        serviceFeeMode: 'EXCLUSIVE',
        currencyCode: 'USDT',
        amount: '10.00',
        destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS },
        idempotencyKey: 'k-data-invalid-get-503',
      },
    } as never;
    const first = await gw.run(CreateWithdrawalDocument, variables, merchant.key);
    expect(posts()).toHaveLength(1);
    // The POST was refused (a 400: nothing created). The wallet GET that would name the field
    // failed; its outage says nothing of the POST, so the answer is the REST API's refusal.
    expect(first.body.errors).toBeUndefined();
    expect(first.body.data?.createWithdrawalIntent).toMatchObject({ __typename: 'DataInvalidError' });
    // Definite: nothing kept, so the same key asks the REST API again (one more POST, not a replay).
    await gw.sandbox.admin('DELETE', '/faults');
    gw.resetCalls();
    const second = await gw.run(CreateWithdrawalDocument, variables, merchant.key);
    expect(posts()).toHaveLength(1);
    expect(second.body.data?.createWithdrawalIntent).toMatchObject({
      __typename: 'CreateWithdrawalIntentSuccess',
    });
  });
});
