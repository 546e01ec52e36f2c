import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EXTERNAL_TRON_ADDRESS,
  startTestSandbox,
  type TestSandbox,
  usdt,
  withdrawalBody,
} from '../../support/sandbox.ts';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startTestSandbox();
});
afterAll(() => sb.close());

async function setup(
  balances = { USDT: '1000', TRX: '10' },
  config: { fee: string; dailyLimit: string; monthlyLimit: string } | null = {
    fee: '1.5',
    dailyLimit: '100000',
    monthlyLimit: '1000000',
  },
) {
  const merchant = await sb.world.merchant(config);
  const wallet = await sb.world.wallet(merchant.id, balances);
  const create = (overrides: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    sb.call('POST', '/external/v1/withdrawal-intents', {
      key: merchant.key,
      body: withdrawalBody(wallet.id, overrides),
      headers,
    });
  const balance = async () =>
    usdt((await sb.call('GET', `/external/v1/wallets/${wallet.id}`, { key: merchant.key })).body.data);
  return { merchant, wallet, create, balance };
}

describe('fees', () => {
  it('inclusive: the fee comes out of the amount; gross is the amount', async () => {
    const { create, balance } = await setup();
    const { status, body } = await create({ serviceFeeMode: 'inclusive', amount: '100.25' });
    expect(status).toBe(201);
    expect(body.data).toMatchObject({
      status: 'preparing',
      transaction: null,
      finalizedAt: null,
      serviceFeeMode: 'inclusive',
      amount: '100.2500000000000000',
      amountFee: '1.5000000000000000',
      amountNet: '98.7500000000000000',
      amountGross: '100.2500000000000000',
      destination: {
        type: 'crypto',
        rail: 'tron',
        routingCode: 'tron:mainnet',
        identifier: EXTERNAL_TRON_ADDRESS,
      },
    });
    expect(body.paging).toBeUndefined();
    expect(await balance()).toEqual({
      availableAmount: '899.7500000000000000',
      lockedAmount: '100.2500000000000000',
    });
  });

  it('exclusive: the fee is charged on top; net is the amount', async () => {
    const { create, balance } = await setup();
    const { body } = await create({ serviceFeeMode: 'exclusive', amount: '0.1' });
    expect(body.data).toMatchObject({
      amount: '0.1000000000000000',
      amountFee: '1.5000000000000000',
      amountNet: '0.1000000000000000',
      amountGross: '1.6000000000000000',
    });
    expect(await balance()).toEqual({
      availableAmount: '998.4000000000000000',
      lockedAmount: '1.6000000000000000',
    });
  });

  it('keeps exact decimals where floats would drift', async () => {
    const { create, balance } = await setup(
      { USDT: '0.3', TRX: '0' },
      { fee: '0.1', dailyLimit: '10', monthlyLimit: '10' },
    );
    const { status, body } = await create({ serviceFeeMode: 'exclusive', amount: '0.2' });
    expect(status).toBe(201);
    expect(body.data.amountGross).toBe('0.3000000000000000');
    expect(await balance()).toEqual({
      availableAmount: '0.0000000000000000',
      lockedAmount: '0.3000000000000000',
    });
  });
});

describe('data_invalid', () => {
  it.each([
    ['a missing field', { senderWalletId: undefined }, 'senderWalletId is required'],
    ['an unknown field', { memo: 'hi' }, 'unknown field memo'],
    [
      'an unknown nested field',
      { destination: { type: 'crypto', rail: 'tron', identifier: 'T', tag: 1 } },
      'unknown field destination.tag',
    ],
    ['a wrong type', { amount: 10 }, 'amount must be a decimal string'],
    [
      'a currency other than USDT',
      { currencyCode: 'TRX' },
      'currencyCode must be USDT (the only currency allowed)',
    ],
    ['an unknown fee mode', { serviceFeeMode: 'split' }, 'serviceFeeMode must be inclusive or exclusive'],
    [
      'a destination type other than crypto',
      { destination: { type: 'bank', rail: 'tron', identifier: 'x' } },
      'destination.type must be crypto (the only type allowed)',
    ],
    [
      'a rail other than tron',
      { destination: { type: 'crypto', rail: 'ethereum', identifier: 'x' } },
      'destination.rail must be tron (the only rail allowed)',
    ],
    [
      'three decimals',
      { amount: '1.234' },
      'amount must be a positive decimal string with at most 2 decimal places; received "1.234"',
    ],
    [
      'zero',
      { amount: '0.00' },
      'amount must be a positive decimal string with at most 2 decimal places; received "0.00"',
    ],
    [
      'a negative amount',
      { amount: '-5' },
      'amount must be a positive decimal string with at most 2 decimal places; received "-5"',
    ],
    [
      'an exponent',
      { amount: '1e3' },
      'amount must be a positive decimal string with at most 2 decimal places; received "1e3"',
    ],
    [
      'leading zeros',
      { amount: '007' },
      'amount must be a positive decimal string with at most 2 decimal places; received "007"',
    ],
  ])('refuses %s, naming the field, and changes nothing', async (_case, overrides, message) => {
    const { create, balance } = await setup();
    const { status, body } = await create(overrides);
    expect(status).toBe(400);
    expect(body).toEqual({ code: 'data_invalid', message, data: null });
    expect(await balance()).toEqual({
      availableAmount: '1000.0000000000000000',
      lockedAmount: '0.0000000000000000',
    });
  });

  it('refuses a body that is not JSON, or not declared as JSON', async () => {
    const { merchant } = await setup();
    const notJson = await sb.call('POST', '/external/v1/withdrawal-intents', {
      key: merchant.key,
      rawBody: '{"amount": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.body).toEqual({
      code: 'data_invalid',
      message: 'request body must be valid JSON',
      data: null,
    });
    const array = await sb.call('POST', '/external/v1/withdrawal-intents', { key: merchant.key, body: [1] });
    expect(array.body.code).toBe('data_invalid');
    const text = await sb.call('POST', '/external/v1/withdrawal-intents', {
      key: merchant.key,
      rawBody: '{}',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.body).toEqual({
      code: 'data_invalid',
      message: 'Content-Type must be application/json; received "text/plain"',
      data: null,
    });
  });

  it("treats another merchant's wallet, or an unknown one, as data_invalid", async () => {
    const mine = await setup();
    const theirs = await setup();
    for (const id of [theirs.wallet.id, '00000000-0000-4000-8000-000000000000', 'not-an-id']) {
      const { status, body } = await mine.create({ senderWalletId: id });
      expect(status).toBe(400);
      expect(body).toEqual({
        code: 'data_invalid',
        message: `senderWalletId must be the id of one of your wallets; received "${id}"`,
        data: null,
      });
    }
    expect(await theirs.balance()).toEqual({
      availableAmount: '1000.0000000000000000',
      lockedAmount: '0.0000000000000000',
    });
  });
});

describe('withdrawal_intent.* codes', () => {
  it('config_incomplete for a merchant without withdrawal configuration', async () => {
    const { create } = await setup(undefined, null);
    const { status, body } = await create();
    expect(status).toBe(400);
    expect(body.code).toBe('withdrawal_intent.config_incomplete');
  });

  it.each([
    ['not base58', 'T0000000000000000000000000000000OO'],
    ['a broken checksum', 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU8'],
    ['an Ethereum address', '0x52908400098527886E0F7030069857D2E4169EE7'],
    ['a Bitcoin address (version byte 0x00)', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2'],
  ])('destination_invalid for %s', async (_case, identifier) => {
    const { create } = await setup();
    const { status, body } = await create({ destination: { type: 'crypto', rail: 'tron', identifier } });
    expect(status).toBe(400);
    expect(body.code).toBe('withdrawal_intent.destination_invalid');
  });

  it('destination_internal for any wallet address on the platform', async () => {
    const { create } = await setup();
    const someoneElse = await setup();
    const address = someoneElse.wallet.networkEndpoint.identifier;
    const { status, body } = await create({
      destination: { type: 'crypto', rail: 'tron', identifier: address },
    });
    expect(status).toBe(400);
    expect(body.code).toBe('withdrawal_intent.destination_internal');
  });

  it('service_fee_not_covered when inclusive and fee >= amount', async () => {
    const { create } = await setup();
    for (const amount of ['1.50', '1.00']) {
      const { status, body } = await create({ serviceFeeMode: 'inclusive', amount });
      expect(status).toBe(400);
      expect(body).toEqual({
        code: 'withdrawal_intent.service_fee_not_covered',
        message: 'No withdrawable amount remains after the service fee.',
        data: null,
      });
    }
    expect((await create({ serviceFeeMode: 'inclusive', amount: '1.51' })).status).toBe(201);
  });

  it('balance_insufficient when the gross amount exceeds available, at the exact edge', async () => {
    const { create, balance } = await setup({ USDT: '101.50', TRX: '0' });
    const over = await create({ amount: '100.01' });
    expect(over.body.code).toBe('withdrawal_intent.balance_insufficient');
    expect((await create({ amount: '100.00' })).status).toBe(201);
    expect(await balance()).toEqual({
      availableAmount: '0.0000000000000000',
      lockedAmount: '101.5000000000000000',
    });
    expect((await create({ amount: '0.01' })).body.code).toBe('withdrawal_intent.balance_insufficient');
  });

  it('balance_insufficient for a wallet without USDT', async () => {
    const { create } = await setup({ TRX: '100' } as never);
    expect((await create()).body.code).toBe('withdrawal_intent.balance_insufficient');
  });

  it('daily_limit_exceeded counts only non-failed, non-cancelled intents of the current UTC day', async () => {
    const { create } = await setup(
      { USDT: '10000', TRX: '0' },
      { fee: '1', dailyLimit: '100', monthlyLimit: '1000' },
    );
    const first = await create({ amount: '60' });
    expect(first.status).toBe(201);
    expect((await create({ amount: '40.01' })).body.code).toBe('withdrawal_intent.daily_limit_exceeded');
    await sb.world.transitionWithdrawal(first.body.data.id, 'cancelled');
    expect((await create({ amount: '100' })).status).toBe(201);
  });

  it('resets the daily limit at UTC midnight but keeps counting the month', async () => {
    const realNow = sb.store.now;
    try {
      sb.store.now = () => new Date('2026-03-10T23:59:59.000Z');
      const { create } = await setup(
        { USDT: '10000', TRX: '0' },
        { fee: '1', dailyLimit: '100', monthlyLimit: '150' },
      );
      expect((await create({ amount: '100' })).status).toBe(201);
      expect((await create({ amount: '1' })).body.code).toBe('withdrawal_intent.daily_limit_exceeded');
      sb.store.now = () => new Date('2026-03-11T00:00:00.000Z');
      expect((await create({ amount: '50' })).status).toBe(201);
      expect((await create({ amount: '0.01' })).body.code).toBe('withdrawal_intent.monthly_limit_exceeded');
      sb.store.now = () => new Date('2026-04-01T00:00:00.000Z');
      expect((await create({ amount: '100' })).status).toBe(201);
    } finally {
      sb.store.now = realNow;
    }
  });
});

describe('check order', () => {
  it('reports the first failing rule: config, destination, internal, fee, balance, daily, monthly', async () => {
    const noConfig = await setup({ USDT: '0', TRX: '0' }, null);
    const everythingWrong = {
      serviceFeeMode: 'inclusive',
      amount: '1',
      destination: { type: 'crypto', rail: 'tron', identifier: 'bad' },
    };
    expect((await noConfig.create(everythingWrong)).body.code).toBe('withdrawal_intent.config_incomplete');

    const poor = await setup({ USDT: '0', TRX: '0' }, { fee: '5', dailyLimit: '0.5', monthlyLimit: '0.5' });
    expect((await poor.create(everythingWrong)).body.code).toBe('withdrawal_intent.destination_invalid');
    const internal = { type: 'crypto', rail: 'tron', identifier: poor.wallet.networkEndpoint.identifier };
    expect((await poor.create({ ...everythingWrong, destination: internal })).body.code).toBe(
      'withdrawal_intent.destination_internal',
    );
    expect((await poor.create({ serviceFeeMode: 'inclusive', amount: '1' })).body.code).toBe(
      'withdrawal_intent.service_fee_not_covered',
    );
    expect((await poor.create({ amount: '1' })).body.code).toBe('withdrawal_intent.balance_insufficient');

    const limited = await setup(
      { USDT: '100', TRX: '0' },
      { fee: '0', dailyLimit: '0.5', monthlyLimit: '0.4' },
    );
    expect((await limited.create({ amount: '1' })).body.code).toBe('withdrawal_intent.daily_limit_exceeded');
    const monthly = await setup(
      { USDT: '100', TRX: '0' },
      { fee: '0', dailyLimit: '5', monthlyLimit: '0.4' },
    );
    expect((await monthly.create({ amount: '1' })).body.code).toBe(
      'withdrawal_intent.monthly_limit_exceeded',
    );
  });
});

describe('Idempotency-Key', () => {
  it('replays the first response for the same merchant, key and body', async () => {
    const { create, balance } = await setup();
    const first = await create({ amount: '10' }, { 'idempotency-key': 'order-1' });
    const again = await create({ amount: '10' }, { 'idempotency-key': 'order-1' });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await balance()).toEqual({
      availableAmount: '988.5000000000000000',
      lockedAmount: '11.5000000000000000',
    });
  });

  it('gives 409 idempotency_key_reused for the same key with a different body', async () => {
    const { create, balance } = await setup();
    await create({ amount: '10' }, { 'idempotency-key': 'order-2' });
    const reused = await create({ amount: '11' }, { 'idempotency-key': 'order-2' });
    expect(reused.status).toBe(409);
    expect(reused.body).toEqual({
      code: 'idempotency_key_reused',
      message: 'This Idempotency-Key was already used with a different request body.',
      data: null,
    });
    expect((await balance()).lockedAmount).toBe('11.5000000000000000');
  });

  it('keeps keys per merchant and creates exactly one intent under concurrent duplicates', async () => {
    const a = await setup();
    const b = await setup();
    const results = await Promise.all(
      Array.from({ length: 50 }, () => a.create({ amount: '5' }, { 'idempotency-key': 'shared' })),
    );
    expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
    const other = await b.create({ amount: '5' }, { 'idempotency-key': 'shared' });
    expect(other.status).toBe(201);
    expect(other.body.data.id).not.toBe(results[0]?.body.data.id);
    expect((await a.balance()).lockedAmount).toBe('6.5000000000000000');
  });
});

describe('concurrency', () => {
  it('never overdraws under 200 concurrent withdrawals and conserves available + locked + withdrawn', async () => {
    const { create, balance, merchant } = await setup(
      { USDT: '1000', TRX: '0' },
      { fee: '1', dailyLimit: '1000000', monthlyLimit: '1000000' },
    );
    const results = await Promise.all(Array.from({ length: 200 }, () => create({ amount: '10' })));
    const created = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 400);
    expect(created).toHaveLength(90); // floor(1000 / 11)
    expect(refused).toHaveLength(110);
    for (const r of refused) expect(r.body.code).toBe('withdrawal_intent.balance_insufficient');
    expect(await balance()).toEqual({
      availableAmount: '10.0000000000000000',
      lockedAmount: '990.0000000000000000',
    });

    // Complete 30, fail 30 (from reviewing), cancel 30: the books still balance.
    const ids = created.map((r) => r.body.data.id as string);
    for (const [index, id] of ids.entries()) {
      if (index < 30) {
        for (const s of ['reviewing', 'pending', 'completed']) await sb.world.transitionWithdrawal(id, s);
      } else if (index < 60) {
        for (const s of ['reviewing', 'failed']) await sb.world.transitionWithdrawal(id, s);
      } else {
        await sb.world.transitionWithdrawal(id, 'cancelled');
      }
    }
    const after = await balance();
    expect(after).toEqual({ availableAmount: '670.0000000000000000', lockedAmount: '0.0000000000000000' });
    const withdrawn = 30 * 11;
    expect(Number(after.availableAmount) + Number(after.lockedAmount) + withdrawn).toBe(1000);
    const listed = await sb.call('GET', '/external/v1/withdrawal-intents?statusIn=completed&size=100', {
      key: merchant.key,
    });
    expect(listed.body.paging.totalCount).toBe(30);
  });
});

describe('lifecycle', () => {
  it('completes with a transaction, legs and finalizedAt, and releases the lock', async () => {
    const { create, balance, merchant } = await setup();
    const { body } = await create({ serviceFeeMode: 'inclusive', amount: '50' });
    const id = body.data.id;
    await sb.world.transitionWithdrawal(id, 'reviewing');
    const pending = await sb.world.transitionWithdrawal(id, 'pending');
    expect(pending.transaction).toBeNull();
    expect(pending.finalizedAt).toBeNull();
    const completed = await sb.world.transitionWithdrawal(id, 'completed');
    expect(completed.status).toBe('completed');
    expect(completed.finalizedAt).toMatch(/Z$/);
    expect(completed.transaction).toMatchObject({
      type: 'blockchain',
      provider: 'tron',
      blockchain: {
        chainId: 'tron:mainnet',
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
        toAddress: EXTERNAL_TRON_ADDRESS,
      },
      legs: [
        { type: 'principal', currencyCode: 'USDT', amount: '48.500000000000000000' },
        { type: 'network_fee', currencyCode: 'TRX', amount: expect.stringMatching(/^\d+\.\d{18}$/) },
      ],
    });
    expect(await balance()).toEqual({
      availableAmount: '950.0000000000000000',
      lockedAmount: '0.0000000000000000',
    });
    const fetched = await sb.call('GET', `/external/v1/withdrawal-intents/${id}`, { key: merchant.key });
    expect(fetched.body.data).toEqual(completed);
  });

  it('returns the locked amount on failure and cancellation', async () => {
    const { create, balance } = await setup();
    const a = (await create({ amount: '10' })).body.data.id;
    const b = (await create({ amount: '20' })).body.data.id;
    expect((await balance()).lockedAmount).toBe('33.0000000000000000');
    await sb.world.transitionWithdrawal(a, 'cancelled');
    await sb.world.transitionWithdrawal(b, 'reviewing');
    await sb.world.transitionWithdrawal(b, 'pending');
    const failed = await sb.world.transitionWithdrawal(b, 'failed');
    expect(failed.finalizedAt).not.toBeNull();
    expect(await balance()).toEqual({
      availableAmount: '1000.0000000000000000',
      lockedAmount: '0.0000000000000000',
    });
  });

  it('refuses illegal transitions with 409 and changes nothing', async () => {
    const { create, balance } = await setup();
    const id = (await create({ amount: '10' })).body.data.id;
    for (const status of ['completed', 'pending', 'failed']) {
      const { status: http, body } = await sb.call(
        'POST',
        `/sandbox/v1/withdrawal-intents/${id}/transition`,
        {
          key: 'test-admin-token',
          body: { status },
        },
      );
      expect(http).toBe(409);
      expect(body.code).toBe('transition_invalid');
    }
    await sb.world.transitionWithdrawal(id, 'cancelled');
    const again = await sb.call('POST', `/sandbox/v1/withdrawal-intents/${id}/transition`, {
      key: 'test-admin-token',
      body: { status: 'reviewing' },
    });
    expect(again.body.message).toBe(
      'A withdrawal intent in status cancelled cannot move to reviewing; allowed: none (final status).',
    );
    expect(await balance()).toEqual({
      availableAmount: '1000.0000000000000000',
      lockedAmount: '0.0000000000000000',
    });
  });

  it('credits a deposit on completion only, by its net amount', async () => {
    const { wallet, balance } = await setup({ USDT: '0', TRX: '0' });
    const deposit = await sb.world.deposit(wallet.id, { amount: '100', amountFee: '2.5', status: 'pending' });
    expect(deposit.finalizedAt).toBeNull();
    await sb.world.transitionDeposit(deposit.id, 'processing');
    expect((await balance()).availableAmount).toBe('0.0000000000000000');
    const done = await sb.world.transitionDeposit(deposit.id, 'completed');
    expect(done.finalizedAt).not.toBeNull();
    expect((await balance()).availableAmount).toBe('97.5000000000000000');
    const failing = await sb.world.deposit(wallet.id, { amount: '5', status: 'pending' });
    await sb.world.transitionDeposit(failing.id, 'failed');
    expect((await balance()).availableAmount).toBe('97.5000000000000000');
    const illegal = await sb.call('POST', `/sandbox/v1/deposits/${done.id}/transition`, {
      key: 'test-admin-token',
      body: { status: 'failed' },
    });
    expect(illegal.status).toBe(409);
  });
});
