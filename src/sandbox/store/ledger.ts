import { type Money, ZERO } from '../money.ts';
import type {
  AssetRecord,
  DepositRecord,
  WalletRecord,
  WithdrawalRecord,
  WithdrawalStatus,
} from './records.ts';

/**
 * Every move of money inside a wallet. Balances change here and nowhere else:
 *
 * - a completed deposit credits its amountNet to available;
 * - a new withdrawal intent moves its amountGross from available to locked;
 * - a completed intent releases its locked amount (the funds left on chain); a failed or cancelled
 *   one returns it to available.
 *
 * So for every asset, available + locked + (gross amounts of completed intents) only grows by
 * credited deposits: the conservation the concurrency test checks. Each function runs
 * synchronously from check to commit: on Node's single thread two requests can never interleave
 * inside one.
 */

export function newAsset(currencyCode: string, available: Money, at: string): AssetRecord {
  return { currencyCode, nickname: currencyCode, available, locked: ZERO, createdAt: at, updatedAt: at };
}

/** Credits a completed deposit's amountNet to the wallet, creating the asset on its first deposit. */
export function creditDeposit(wallet: WalletRecord, deposit: DepositRecord, at: string): void {
  let asset = wallet.assets.get(deposit.currencyCode);
  if (!asset) {
    asset = newAsset(deposit.currencyCode, ZERO, at);
    wallet.assets.set(deposit.currencyCode, asset);
  }
  asset.available = asset.available.plus(deposit.amountNet);
  touch(wallet, asset, at);
}

/** Locks a new intent's gross amount. Throws (a bug, not a refusal) when the balance cannot cover it. */
export function lockWithdrawal(
  wallet: WalletRecord,
  currencyCode: string,
  amountGross: Money,
  at: string,
): void {
  const asset = wallet.assets.get(currencyCode);
  if (!asset || asset.available.lt(amountGross)) {
    throw new Error(`wallet ${wallet.id} cannot cover ${amountGross} ${currencyCode}`);
  }
  asset.available = asset.available.minus(amountGross);
  asset.locked = asset.locked.plus(amountGross);
  touch(wallet, asset, at);
}

/** Releases an intent's locked amount when it reaches a final status. */
export function settleWithdrawal(
  wallet: WalletRecord,
  intent: WithdrawalRecord,
  status: Exclude<WithdrawalStatus, 'preparing' | 'reviewing' | 'pending'>,
  at: string,
): void {
  const asset = wallet.assets.get(intent.currencyCode);
  if (!asset) throw new Error(`withdrawal intent ${intent.id} references a missing asset`);
  asset.locked = asset.locked.minus(intent.amountGross);
  if (status !== 'completed') asset.available = asset.available.plus(intent.amountGross);
  touch(wallet, asset, at);
}

function touch(wallet: WalletRecord, asset: AssetRecord, at: string): void {
  asset.updatedAt = at;
  wallet.updatedAt = at;
}
