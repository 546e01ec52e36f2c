import { badUserInput } from '../errors.ts';
import { builder } from './builder.ts';

const UNKNOWN = '\u0000unknown';

/**
 * The spec's value lists are incomplete ("values that occur"), so every enum read from the REST
 * API has UNKNOWN: a value the schema does not know yet resolves to UNKNOWN instead of failing
 * the query, and the raw string stays reachable on a sibling `raw…` field.
 */
function openEnum<const V extends readonly string[]>(name: string, description: string, values: V) {
  const ref = builder.enumType(name, {
    description,
    values: Object.fromEntries([
      ...values.map((v) => [v.toUpperCase(), { value: v }]),
      [
        'UNKNOWN',
        { value: UNKNOWN, description: 'A value this schema does not know yet; see the raw field.' },
      ],
    ]) as Record<string, { value: V[number] }>,
  });
  const known = new Set<string>(values);
  return { ref, values, fromRaw: (raw: string): V[number] => (known.has(raw) ? raw : UNKNOWN) };
}

export const WalletStatus = openEnum('WalletStatus', 'Status of a wallet.', ['active'] as const);

export const DepositStatus = openEnum('DepositStatus', 'Status of a deposit.', [
  'pending',
  'processing',
  'completed',
  'failed',
] as const);

export const WithdrawalIntentStatus = openEnum('WithdrawalIntentStatus', 'Status of a withdrawal intent.', [
  'preparing',
  'reviewing',
  'pending',
  'completed',
  'failed',
  'cancelled',
] as const);

export const ServiceFeeMode = openEnum(
  'ServiceFeeMode',
  'INCLUSIVE: the fee is deducted from the amount (net = amount - fee, gross = amount). ' +
    'EXCLUSIVE: the fee is charged on top (net = amount, gross = amount + fee).',
  ['inclusive', 'exclusive'] as const,
);

export const TransactionLegType = openEnum(
  'TransactionLegType',
  'PRINCIPAL: the transferred currency. NETWORK_FEE: the network fee, paid in TRX.',
  ['principal', 'network_fee'] as const,
);

/** The REST `statusIn` for a status filter, sorted so equal filters share cursors and cache keys. */
export function statusFilter(values: readonly string[] | null | undefined): string[] | undefined {
  if (!values?.length) return undefined;
  if (values.includes(UNKNOWN)) throw badUserInput('status UNKNOWN cannot be used as a filter', ['status']);
  return [...new Set(values)].sort();
}
