import { quoted } from '../errors/echoes.ts';
import { restIdOf } from '../schema/global-ids.ts';
import { INPUT_LIMITS } from '../schema/input-limits.ts';
import { isTronAddress } from '../shared/tron.ts';
import type { CreateWithdrawalIntentBody } from '../upstream/types.ts';
import { DataInvalidError, userError, type WithdrawalUserError } from './user-errors.ts';

/** createWithdrawalIntent's input as GraphQL hands it over (enums already as REST values). */
export interface CreateWithdrawalInput {
  walletId: string | number;
  serviceFeeMode: string;
  currencyCode: string;
  amount: string;
  destination: { type: string; rail: string; identifier: string };
  idempotencyKey?: string | null;
}

export type ParsedWithdrawalInput =
  | { ok: true; body: CreateWithdrawalIntentBody; idempotencyKey: string | null }
  /** `walletId`: the REST id the input named, when it was well formed (the REST API checks it first). */
  | { ok: false; error: WithdrawalUserError; walletId: string | null };

/** Positive is checked apart: at most 18 integer digits and 2 decimals, as the spec's amount. */
const WITHDRAWAL_AMOUNT = /^(?:0|[1-9]\d{0,17})(?:\.\d{1,2})?$/;
/** The `idempotencyKey` input's contract (the sandbox checks its own header apart, on purpose). */
const IDEMPOTENCY_KEY = new RegExp(`^[\\x21-\\x7e]{1,${INPUT_LIMITS.idempotencyKey}}$`);

/**
 * What the gateway can check before calling the REST API, in the REST API's order
 * (docs/decisions.md, Gateway-side validation): walletId, serviceFeeMode, currencyCode, amount,
 * destination type and rail, idempotencyKey, the address's length, then its Tron checksum. Failures
 * name the GraphQL input field and are the typed results the REST API's refusals become, quoting at
 * most a prefix of a value (echoes.ts). Pure: no I/O, no clock.
 */
export function parseCreateWithdrawalInput(input: CreateWithdrawalInput): ParsedWithdrawalInput {
  let walletId: string | null = null;
  const invalid = (message: string, ...path: string[]): ParsedWithdrawalInput => ({
    ok: false,
    error: new DataInvalidError(message, ['input', ...path]),
    walletId,
  });
  try {
    walletId = restIdOf(String(input.walletId), 'Wallet', ['input', 'walletId']);
  } catch (error) {
    return invalid((error as Error).message, 'walletId');
  }
  if (input.serviceFeeMode !== 'inclusive' && input.serviceFeeMode !== 'exclusive') {
    return invalid('serviceFeeMode must be INCLUSIVE or EXCLUSIVE', 'serviceFeeMode');
  }
  if (input.currencyCode !== 'USDT') {
    return invalid(
      `currencyCode must be USDT (the only currency allowed); received ${quoted(input.currencyCode)}`,
      'currencyCode',
    );
  }
  if (!WITHDRAWAL_AMOUNT.test(input.amount) || /^0(?:\.0{1,2})?$/.test(input.amount)) {
    return invalid(
      `amount must be positive with at most 2 decimal places; received ${quoted(input.amount)}`,
      'amount',
    );
  }
  if (input.destination.type !== 'crypto') {
    return invalid('destination.type must be crypto (the only type allowed)', 'destination', 'type');
  }
  if (input.destination.rail !== 'tron') {
    return invalid('destination.rail must be tron (the only rail allowed)', 'destination', 'rail');
  }
  const idempotencyKey = input.idempotencyKey ?? null;
  if (idempotencyKey !== null && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
    return invalid(
      `idempotencyKey must be 1 to ${INPUT_LIMITS.idempotencyKey} printable ASCII characters`,
      'idempotencyKey',
    );
  }
  // Refused as input, before the address checks below (a wallet lookup, base58 decoding).
  if (input.destination.identifier.length > INPUT_LIMITS.tronAddress) {
    return invalid(
      `destination.identifier must be a Tron address of ${INPUT_LIMITS.tronAddress} characters; received ${input.destination.identifier.length}`,
      'destination',
      'identifier',
    );
  }
  if (!isTronAddress(input.destination.identifier)) {
    return {
      ok: false,
      error: userError(
        'withdrawal_intent.destination_invalid',
        'input.destination.identifier must be a Tron address (base58check, version byte 0x41).',
      ),
      walletId,
    };
  }
  return {
    ok: true,
    idempotencyKey,
    body: {
      senderWalletId: walletId,
      serviceFeeMode: input.serviceFeeMode,
      currencyCode: input.currencyCode,
      amount: input.amount,
      destination: {
        type: input.destination.type,
        rail: input.destination.rail,
        identifier: input.destination.identifier,
      },
    },
  };
}
