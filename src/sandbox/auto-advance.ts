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

export interface AutoAdvanceOptions {
  /**
   * How long a deposit or intent stays in each open status: it takes its next step along the
   * happy path `stepMs` after its own last change (found within a second), however many others
   * are open. A new intent completes after 3 steps, a new deposit after 2. Must be > 0.
   */
  stepMs: number;
  logger?: Logger;
}

/**
 * Moves every open deposit and withdrawal intent along the happy path on its own clock, so a demo
 * shows statuses and balances changing on their own: deposits pending → processing → completed,
 * intents preparing → reviewing → pending → completed. Time is the store's clock (`store.now`);
 * every move goes through the store's transition methods, so balances lock, unlock and settle
 * exactly as through the admin API.
 *
 * Items already open when it starts (the seeded world's, last changed months ago) take their
 * first step spread over the first `stepMs`, not all in the same second. An intent held until
 * read (`store.holdUntilRead`) waits until its first read by id and steps from that read.
 * Returns a function that stops it.
 */
export function startAutoAdvance(store: SandboxStore, options: AutoAdvanceOptions): () => void {
  const { stepMs, logger } = options;
  if (!(stepMs > 0)) throw new RangeError(`stepMs must be > 0; received ${stepMs}`);
  // When each item of the backlog found at start counts as last changed.
  const backlog = new Map<string, number>();
  const startedAt = store.now().getTime();
  const open = [...store.openDeposits(), ...store.openWithdrawals()];
  open.forEach((item, i) => {
    backlog.set(item.id, startedAt - stepMs + Math.ceil(((i + 1) * stepMs) / open.length));
  });
  const lastChange = (item: { id: string; updatedAt: string }) =>
    Math.max(Date.parse(item.updatedAt), backlog.get(item.id) ?? Number.NEGATIVE_INFINITY);

  const tick = () => {
    const now = store.now().getTime();
    let deposits = 0;
    let intents = 0;
    for (const deposit of store.openDeposits()) {
      const next = NEXT_DEPOSIT[deposit.status];
      if (!next || now < lastChange(deposit) + stepMs) continue;
      store.transitionDeposit(deposit.id, next);
      backlog.delete(deposit.id);
      deposits++;
    }
    for (const intent of store.openWithdrawals()) {
      const next = NEXT_WITHDRAWAL[intent.status];
      const released = store.releasedAt(intent.id);
      if (!next || released === null) continue;
      const since = Math.max(lastChange(intent), released === undefined ? 0 : Date.parse(released));
      if (now < since + stepMs) continue;
      store.transitionWithdrawal(intent.id, next);
      backlog.delete(intent.id);
      intents++;
    }
    if (deposits || intents) logger?.debug({ deposits, intents }, 'sandbox auto-advance');
  };
  // A look every second (more often for short steps): an item moves at most that late.
  const timer = setInterval(tick, Math.min(1_000, Math.max(10, Math.floor(stepMs / 8))));
  timer.unref();
  return () => clearInterval(timer);
}
