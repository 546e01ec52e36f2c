import { Decimal } from 'decimal.js';

/**
 * Exact decimal arithmetic for the sandbox's ledger. Amounts never pass through a JS number:
 * they enter as decimal strings, are added and compared as Decimal, and leave as strings with
 * the spec's fixed number of fractional digits.
 */
export const Money = Decimal.clone({
  precision: 80,
  rounding: Decimal.ROUND_DOWN,
  toExpNeg: -100,
  toExpPos: 100,
});
export type Money = InstanceType<typeof Money>;

export const ZERO = new Money(0);

/** A non-negative plain decimal string: digits, optionally a dot and more digits. */
const DECIMAL = /^(?:0|[1-9]\d{0,19})(?:\.\d{1,18})?$/;

/** Parses a non-negative decimal string, or returns null when it is not one. */
export function parseMoney(value: unknown): Money | null {
  if (typeof value !== 'string' || !DECIMAL.test(value)) return null;
  return new Money(value);
}

/** Resource amounts (wallets, deposits, withdrawal intents): 16 fractional digits. */
export function formatAmount(value: Money): string {
  return value.toFixed(16);
}

/** Amounts inside transaction legs: 18 fractional digits. */
export function formatLegAmount(value: Money): string {
  return value.toFixed(18);
}
