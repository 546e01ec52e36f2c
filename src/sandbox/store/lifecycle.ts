import { type ApiError, conflict } from '../errors.ts';
import { creditDeposit, settleWithdrawal } from './ledger.ts';
import {
  type ChainTransaction,
  type DepositRecord,
  type DepositStatus,
  NETWORK_FEE_TRX,
  type WalletRecord,
  type WithdrawalRecord,
  type WithdrawalStatus,
} from './records.ts';

/**
 * Status lifecycles (the spec says "not shown"; these are the sandbox's, documented in docs/sandbox.md):
 *
 *   deposit:           pending → processing → completed | failed (pending may skip processing)
 *   withdrawal intent: preparing → reviewing → pending → completed;
 *                      reviewing | pending → failed; preparing | reviewing → cancelled
 *
 * A move not in these tables is a 409 transition_invalid. What each move does to balances is in
 * ledger.ts.
 */

export const DEPOSIT_TRANSITIONS: Record<DepositStatus, readonly DepositStatus[]> = {
  pending: ['processing', 'completed', 'failed'],
  processing: ['completed', 'failed'],
  completed: [],
  failed: [],
};

export const WITHDRAWAL_TRANSITIONS: Record<WithdrawalStatus, readonly WithdrawalStatus[]> = {
  preparing: ['reviewing', 'cancelled'],
  reviewing: ['pending', 'failed', 'cancelled'],
  pending: ['completed', 'failed'],
  completed: [],
  failed: [],
  cancelled: [],
};

/** Whether the admin API (or auto-advance) may move a deposit from its status to `status`. */
export function checkDepositTransition(deposit: DepositRecord, status: DepositStatus): void {
  const allowed = DEPOSIT_TRANSITIONS[deposit.status];
  if (!allowed.includes(status)) throw illegalTransition('deposit', deposit.status, status, allowed);
}

export function checkWithdrawalTransition(intent: WithdrawalRecord, status: WithdrawalStatus): void {
  const allowed = WITHDRAWAL_TRANSITIONS[intent.status];
  if (!allowed.includes(status)) throw illegalTransition('withdrawal intent', intent.status, status, allowed);
}

/** Moves a deposit to `status` (already checked); completion credits the wallet. */
export function applyDepositStatus(
  deposit: DepositRecord,
  wallet: WalletRecord,
  status: DepositStatus,
  at: string,
): void {
  deposit.status = status;
  deposit.updatedAt = at;
  if (status === 'completed' || status === 'failed') deposit.finalizedAt = at;
  if (status === 'completed') creditDeposit(wallet, deposit, at);
}

/**
 * Moves an intent to `status` (already checked). A final status settles its locked amount and
 * sets finalizedAt; completed also records the on-chain transaction, with `txHash`.
 */
export function applyWithdrawalStatus(
  intent: WithdrawalRecord,
  wallet: WalletRecord,
  status: WithdrawalStatus,
  at: string,
  txHash: () => string,
): void {
  if (status === 'completed' || status === 'failed' || status === 'cancelled') {
    settleWithdrawal(wallet, intent, status, at);
    intent.finalizedAt = at;
  }
  if (status === 'completed') {
    const transaction: ChainTransaction = {
      hash: txHash(),
      fromAddress: wallet.address,
      toAddress: intent.destinationAddress,
      networkFee: NETWORK_FEE_TRX,
    };
    intent.transaction = transaction;
  }
  intent.status = status;
  intent.updatedAt = at;
}

function illegalTransition(kind: string, from: string, to: string, allowed: readonly string[]): ApiError {
  const next = allowed.length ? allowed.join(', ') : 'none (final status)';
  return conflict(
    'transition_invalid',
    `A ${kind} in status ${from} cannot move to ${to}; allowed: ${next}.`,
  );
}
