import type { Logger } from 'pino';
import type { DepositStatus, WithdrawalStatus } from './store/records.ts';
import type { SandboxStore } from './store/store.ts';

const NEXT_DEPOSIT: Partial<Record<DepositStatus, DepositStatus>> = {
  pending: 'processing',
  processing: 'completed',
};
const NEXT_WITHDRAWAL: Partial<Record<WithdrawalStatus, WithdrawalStatus>> = {
  preparing: 'reviewing',
  reviewing: 'pending',
  pending: 'completed',
};

/**
 * Moves open deposits and withdrawal intents one step along the happy path every `intervalMs`,
 * oldest first, a few per tick, so a demo shows statuses and balances changing on their own.
 * Returns a function that stops it.
 */
export function startAutoAdvance(
  store: SandboxStore,
  options: { intervalMs: number; perTick?: number; logger?: Logger },
): () => void {
  const perTick = options.perTick ?? 3;
  const tick = () => {
    const deposits = store.openDeposits().slice(0, perTick);
    for (const deposit of deposits) {
      const next = NEXT_DEPOSIT[deposit.status];
      if (next) store.transitionDeposit(deposit.id, next);
    }
    const intents = store.openWithdrawals().slice(0, perTick);
    for (const intent of intents) {
      const next = NEXT_WITHDRAWAL[intent.status];
      if (next) store.transitionWithdrawal(intent.id, next);
    }
    if (deposits.length || intents.length) {
      options.logger?.debug({ deposits: deposits.length, intents: intents.length }, 'sandbox auto-advance');
    }
  };
  const timer = setInterval(tick, options.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
