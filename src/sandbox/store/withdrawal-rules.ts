import { isTronAddress } from '../../shared/tron.ts';
import { dataInvalid, withdrawalError } from '../errors.ts';
import { formatAmount, type Money, ZERO } from '../money.ts';
import type {
  CreateWithdrawalInput,
  Merchant,
  ServiceFeeMode,
  WalletRecord,
  WithdrawalRecord,
} from './records.ts';

/**
 * The money rules of POST /withdrawal-intents, free of storage: given the merchant, its wallet
 * and its history, either the amounts of the intent to create or the REST error that refuses it.
 */

/** The spec's fee table: what the recipient gets (net) and what leaves the wallet (gross). */
export function withdrawalAmounts(
  mode: ServiceFeeMode,
  amount: Money,
  fee: Money,
): { amountFee: Money; amountNet: Money; amountGross: Money } {
  return mode === 'inclusive'
    ? { amountFee: fee, amountNet: amount.minus(fee), amountGross: amount }
    : { amountFee: fee, amountNet: amount, amountGross: amount.plus(fee) };
}

export interface WithdrawalFacts {
  merchant: Merchant;
  /** The sender wallet when it is one of this merchant's, else undefined. */
  wallet: WalletRecord | undefined;
  /** Whether an address belongs to any wallet on the platform. */
  isPlatformAddress(address: string): boolean;
  /** The merchant's intents, oldest first. */
  history: readonly WithdrawalRecord[];
  now: Date;
}

/**
 * Checks a withdrawal in this order (the first failure wins): sender wallet (data_invalid, where
 * the spec says "not shown"), config_incomplete, destination_invalid, destination_internal,
 * service_fee_not_covered, balance_insufficient, daily_limit_exceeded, monthly_limit_exceeded.
 * Limits count the amount of the merchant's intents that are neither failed nor cancelled,
 * created since the start of the current UTC day and month.
 */
export function checkWithdrawal(input: CreateWithdrawalInput, facts: WithdrawalFacts) {
  const { wallet } = facts;
  if (!wallet) {
    throw dataInvalid(
      `senderWalletId must be the id of one of your wallets; received "${input.senderWalletId}"`,
    );
  }
  const config = facts.merchant.withdrawalConfig;
  if (!config) {
    throw withdrawalError('config_incomplete', 'Withdrawal configuration is incomplete for this merchant.');
  }
  const address = input.destination.identifier;
  if (!isTronAddress(address)) {
    throw withdrawalError(
      'destination_invalid',
      'destination.identifier must be a Tron address (base58check, version byte 0x41).',
    );
  }
  if (facts.isPlatformAddress(address)) {
    throw withdrawalError(
      'destination_internal',
      'destination.identifier is an address internal to the platform.',
    );
  }
  const { amount } = input;
  if (input.serviceFeeMode === 'inclusive' && config.fee.gte(amount)) {
    throw withdrawalError('service_fee_not_covered', 'No withdrawable amount remains after the service fee.');
  }
  const amounts = withdrawalAmounts(input.serviceFeeMode, amount, config.fee);
  const available = wallet.assets.get(input.currencyCode)?.available ?? ZERO;
  if (amounts.amountGross.gt(available)) {
    throw withdrawalError(
      'balance_insufficient',
      `Available ${input.currencyCode} balance ${formatAmount(available)} is less than the gross amount ${formatAmount(amounts.amountGross)}.`,
    );
  }
  const { today, thisMonth } = withdrawnSince(facts.history, facts.now);
  if (today.plus(amount).gt(config.dailyLimit)) {
    throw withdrawalError('daily_limit_exceeded', 'The amount exceeds the daily withdrawal limit.');
  }
  if (thisMonth.plus(amount).gt(config.monthlyLimit)) {
    throw withdrawalError('monthly_limit_exceeded', 'The amount exceeds the monthly withdrawal limit.');
  }
  return { wallet, address, ...amounts };
}

/** Amounts of the non-failed, non-cancelled intents created in the current UTC day and month. */
function withdrawnSince(history: readonly WithdrawalRecord[], now: Date): { today: Money; thisMonth: Money } {
  const dayStart = new Date(
    Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()),
  ).toISOString();
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
  let today = ZERO;
  let thisMonth = ZERO;
  for (let i = history.length - 1; i >= 0; i--) {
    const previous = history[i] as WithdrawalRecord;
    if (previous.createdAt < monthStart) break;
    if (previous.status === 'failed' || previous.status === 'cancelled') continue;
    thisMonth = thisMonth.plus(previous.amount);
    if (previous.createdAt >= dayStart) today = today.plus(previous.amount);
  }
  return { today, thisMonth };
}
