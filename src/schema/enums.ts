import { badUserInput } from '../errors/errors.ts';
import { builder } from './builder.ts';

const UNKNOWN = '\u0000unknown';

/**
 * The spec's value lists are incomplete ("values that occur"), so every enum read from the REST
 * API has UNKNOWN: a value the schema does not know yet resolves to UNKNOWN instead of failing
 * the query, and the raw string stays reachable on a sibling `raw…` field.
 */
function openEnum<const V extends string>(name: string, description: string, described: Record<V, string>) {
  const values = Object.keys(described) as V[];
  const ref = builder.enumType(name, {
    description,
    values: Object.fromEntries([
      ...values.map((v) => [v.toUpperCase(), { value: v, description: described[v] }]),
      [
        'UNKNOWN',
        { value: UNKNOWN, description: 'A value this schema does not know yet; see the raw field.' },
      ],
    ]) as Record<string, { value: V }>,
  });
  const known = new Set<string>(values);
  return { ref, values, fromRaw: (raw: string): V => (known.has(raw) ? (raw as V) : (UNKNOWN as V)) };
}

export const WalletStatus = openEnum('WalletStatus', 'Status of a wallet (REST `status`).', {
  active: 'The wallet can receive deposits and send withdrawals (REST `active`).',
});

export const DepositStatus = openEnum(
  'DepositStatus',
  'Status of a deposit (REST `status`). COMPLETED and FAILED are final.',
  {
    pending: 'Seen, not yet processed (REST `pending`).',
    processing: 'Being confirmed (REST `processing`).',
    completed: 'Credited to the wallet; final (REST `completed`).',
    failed: 'Not credited; final (REST `failed`).',
  },
);

export const WithdrawalIntentStatus = openEnum(
  'WithdrawalIntentStatus',
  'Status of a withdrawal intent (REST `status`). COMPLETED, FAILED and CANCELLED are final; until then the gross amount is locked in the wallet.',
  {
    preparing: 'Just created; no on-chain transaction yet (REST `preparing`).',
    reviewing: 'Under review by the platform (REST `reviewing`).',
    pending: 'Approved and being sent on-chain (REST `pending`).',
    completed: 'Sent: the transaction and finalizedAt are set; final (REST `completed`).',
    failed: 'Not sent; the locked amount is released; final (REST `failed`).',
    cancelled: 'Withdrawn before sending; the locked amount is released; final (REST `cancelled`).',
  },
);

export const ServiceFeeMode = openEnum(
  'ServiceFeeMode',
  'How the service fee is charged (REST `serviceFeeMode`).',
  {
    inclusive: 'The fee is deducted from the amount: net = amount - fee, gross = amount (REST `inclusive`).',
    exclusive: 'The fee is charged on top: net = amount, gross = amount + fee (REST `exclusive`).',
  },
);

export const TransactionLegType = openEnum(
  'TransactionLegType',
  'What a transaction leg moves (REST leg `type`).',
  {
    principal: 'The transferred currency, e.g. USDT (REST `principal`).',
    network_fee: 'The network fee, paid in TRX (REST `network_fee`).',
  },
);

/** The REST `statusIn` for a status filter, sorted so equal filters share cursors and cache keys. */
export function statusFilter(values: readonly string[] | null | undefined): string[] | undefined {
  if (!values?.length) return undefined;
  if (values.includes(UNKNOWN)) throw badUserInput('status UNKNOWN cannot be used as a filter', ['status']);
  return [...new Set(values)].sort();
}
