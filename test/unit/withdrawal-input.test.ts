import { encodeGlobalID } from '@pothos/plugin-relay';
import { describe, expect, it } from 'vitest';
import { type CreateWithdrawalInput, parseCreateWithdrawalInput } from '../../src/withdrawals/input.ts';
import { DataInvalidError } from '../../src/withdrawals/user-errors.ts';

const ADDRESS = 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7';
const WALLET = '4c7e9a52-0f3b-4d6e-9a1c-2b8f5e7d3a10';

function input(overrides: Partial<CreateWithdrawalInput> = {}): CreateWithdrawalInput {
  return {
    walletId: WALLET,
    serviceFeeMode: 'exclusive',
    currencyCode: 'USDT',
    amount: '10.50',
    destination: { type: 'crypto', rail: 'tron', identifier: ADDRESS },
    ...overrides,
  };
}

/** The refusal's type name, message pattern source and input path, for compact assertions. */
function refusal(value: CreateWithdrawalInput) {
  const parsed = parseCreateWithdrawalInput(value);
  if (parsed.ok) throw new Error('expected a refusal');
  const { error } = parsed;
  return {
    type: error.name,
    code: error.code,
    field: error instanceof DataInvalidError ? error.field : undefined,
    message: error.message,
  };
}

describe('parseCreateWithdrawalInput', () => {
  it('builds the REST body from a REST or a global wallet id', () => {
    const body = {
      senderWalletId: WALLET,
      serviceFeeMode: 'exclusive',
      currencyCode: 'USDT',
      amount: '10.50',
      destination: { type: 'crypto', rail: 'tron', identifier: ADDRESS },
    };
    expect(parseCreateWithdrawalInput(input())).toEqual({ ok: true, body, idempotencyKey: null });
    expect(
      parseCreateWithdrawalInput(
        input({ walletId: encodeGlobalID('Wallet', WALLET), idempotencyKey: 'k-1' }),
      ),
    ).toEqual({ ok: true, body, idempotencyKey: 'k-1' });
  });

  it.each<[string, Partial<CreateWithdrawalInput>, string[]]>([
    ['a global id of another type', { walletId: encodeGlobalID('Deposit', WALLET) }, ['input', 'walletId']],
    ['a wallet id with spaces', { walletId: 'not an id' }, ['input', 'walletId']],
    ['an unknown fee mode', { serviceFeeMode: 'UNKNOWN' }, ['input', 'serviceFeeMode']],
    ['another currency', { currencyCode: 'TRX' }, ['input', 'currencyCode']],
    ['three decimals', { amount: '1.005' }, ['input', 'amount']],
    ['zero', { amount: '0.00' }, ['input', 'amount']],
    ['a negative amount', { amount: '-1' }, ['input', 'amount']],
    [
      'another destination type',
      { destination: { type: 'iban', rail: 'tron', identifier: ADDRESS } },
      ['input', 'destination', 'type'],
    ],
    [
      'another rail',
      { destination: { type: 'crypto', rail: 'eth', identifier: ADDRESS } },
      ['input', 'destination', 'rail'],
    ],
    ['a key with a space', { idempotencyKey: 'two words' }, ['input', 'idempotencyKey']],
    ['an empty key', { idempotencyKey: '' }, ['input', 'idempotencyKey']],
    ['a key of 256 characters', { idempotencyKey: 'k'.repeat(256) }, ['input', 'idempotencyKey']],
    ['a wallet id of 201 characters', { walletId: 'w'.repeat(201) }, ['input', 'walletId']],
    [
      'a global wallet id around a REST id of 129 characters',
      { walletId: encodeGlobalID('Wallet', 'w'.repeat(129)) },
      ['input', 'walletId'],
    ],
    [
      'an address longer than a Tron address (before the wallet is looked up)',
      { destination: { type: 'crypto', rail: 'tron', identifier: `${ADDRESS}x` } },
      ['input', 'destination', 'identifier'],
    ],
  ])('refuses %s as data_invalid naming the input field', (_name, overrides, field) => {
    expect(refusal(input(overrides))).toMatchObject({
      type: 'DataInvalidError',
      code: 'data_invalid',
      field,
    });
  });

  it('refuses a bad Tron checksum as destination_invalid, after every data_invalid check', () => {
    const badAddress = { type: 'crypto', rail: 'tron', identifier: `${ADDRESS.slice(0, -1)}8` };
    expect(refusal(input({ destination: badAddress }))).toMatchObject({
      type: 'DestinationInvalidError',
      code: 'withdrawal_intent.destination_invalid',
    });
    // A data_invalid problem elsewhere wins over the address.
    expect(refusal(input({ destination: badAddress, amount: '1.005' }))).toMatchObject({
      type: 'DataInvalidError',
      field: ['input', 'amount'],
    });
  });

  it('quotes at most the first 32 characters of a value it refuses', () => {
    expect(refusal(input({ currencyCode: 'X'.repeat(90_000) })).message).toBe(
      `currencyCode must be USDT (the only currency allowed); received "${'X'.repeat(32)}…"`,
    );
    expect(refusal(input({ amount: `1.${'5'.repeat(100)}` })).message).toBe(
      `amount must be positive with at most 2 decimal places; received "1.${'5'.repeat(30)}…"`,
    );
  });

  it('checks in the documented order: the first failing field is named', () => {
    const everythingWrong = input({
      walletId: 'not an id',
      serviceFeeMode: 'x',
      currencyCode: 'TRX',
      amount: '0',
      destination: { type: 'iban', rail: 'eth', identifier: 'nope' },
      idempotencyKey: '',
    });
    expect(refusal(everythingWrong).field).toEqual(['input', 'walletId']);
    expect(refusal({ ...everythingWrong, walletId: WALLET }).field).toEqual(['input', 'serviceFeeMode']);
  });
});
