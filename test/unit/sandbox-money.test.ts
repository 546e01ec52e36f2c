import { describe, expect, it } from 'vitest';
import { formatAmount, formatLegAmount, Money, parseMoney } from '../../src/sandbox/money.ts';
import { withdrawalAmounts } from '../../src/sandbox/store/withdrawal-rules.ts';
import { isTronAddress, tronAddressFromBytes } from '../../src/shared/tron.ts';

describe('sandbox money', () => {
  it('adds exactly where floats drift', () => {
    expect(formatAmount(new Money('0.1').plus('0.2'))).toBe('0.3000000000000000');
    expect(formatLegAmount(new Money('12345678901234567.89'))).toBe('12345678901234567.890000000000000000');
  });

  it('parses only plain non-negative decimal strings', () => {
    expect(parseMoney('10.25')?.toFixed(2)).toBe('10.25');
    for (const bad of ['-1', '1e3', ' 1', '1.', '.5', '0x10', '', 'NaN', 1 as unknown as string]) {
      expect(parseMoney(bad)).toBeNull();
    }
  });
});

describe('tron addresses', () => {
  it('accepts a valid mainnet address and round-trips generated ones', () => {
    expect(isTronAddress('TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7')).toBe(true);
    const address = tronAddressFromBytes(new Uint8Array(20).fill(7));
    expect(address).toMatch(/^T/);
    expect(isTronAddress(address)).toBe(true);
  });

  it('rejects bad checksums, other version bytes and other lengths', () => {
    expect(isTronAddress('TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU8')).toBe(false);
    expect(isTronAddress('1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2')).toBe(false);
    expect(isTronAddress('TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU')).toBe(false);
    expect(isTronAddress('')).toBe(false);
  });
});

describe('the fee table (withdrawalAmounts)', () => {
  it('inclusive deducts the fee from the amount; exclusive charges it on top', () => {
    const fee = new Money('1.5');
    const inclusive = withdrawalAmounts('inclusive', new Money('10'), fee);
    expect([inclusive.amountNet, inclusive.amountGross].map(formatAmount)).toEqual([
      '8.5000000000000000',
      '10.0000000000000000',
    ]);
    const exclusive = withdrawalAmounts('exclusive', new Money('10'), fee);
    expect([exclusive.amountNet, exclusive.amountGross].map(formatAmount)).toEqual([
      '10.0000000000000000',
      '11.5000000000000000',
    ]);
    expect(formatAmount(withdrawalAmounts('exclusive', new Money('0.1'), new Money('0.2')).amountGross)).toBe(
      '0.3000000000000000',
    );
  });
});
