import type { DepositRecord, WithdrawalRecord } from './records.ts';

/**
 * What the auto-advance looks at once a second (auto-advance.ts): the deposits and intents still
 * open, in the order they were recorded, so that its look costs what is open, not the whole
 * history (100k deposits in a benchmark-sized world); and the intents it leaves alone until their
 * first read by id. The store (store.ts) tells it of every record made, finalised and read by id.
 */
export class OpenRecords {
  private readonly deposits = new Map<string, DepositRecord>();
  private readonly withdrawals = new Map<string, WithdrawalRecord>();
  /** Intents the auto-advance leaves alone until their first read by id: id → that read's time (null: none yet). */
  private readonly holds = new Map<string, string | null>();

  depositOpened(deposit: DepositRecord): void {
    this.deposits.set(deposit.id, deposit);
  }

  depositClosed(id: string): void {
    this.deposits.delete(id);
  }

  withdrawalOpened(intent: WithdrawalRecord): void {
    this.withdrawals.set(intent.id, intent);
  }

  withdrawalClosed(id: string): void {
    this.withdrawals.delete(id);
  }

  /** Deposits still pending or processing, in the order recorded (a copy: safe to transition while iterating). */
  openDeposits(): DepositRecord[] {
    return [...this.deposits.values()];
  }

  /** Intents still preparing, reviewing or pending, in the order recorded (a copy, as openDeposits). */
  openWithdrawals(): WithdrawalRecord[] {
    return [...this.withdrawals.values()];
  }

  /**
   * Holds an intent where it is until its first read by id (SandboxStore.getWithdrawal): the
   * auto-advance leaves it alone until then, and runs its clock from that read. The embedded
   * sandbox's demo intent, so that whoever first watches it sees it walk. Status changes through
   * the admin API still apply.
   */
  hold(id: string): void {
    this.holds.set(id, null);
  }

  /** The intent was read by id: the first such read releases its hold, at `now()`. */
  read(id: string, now: () => string): void {
    if (this.holds.get(id) === null) this.holds.set(id, now());
  }

  /** Undefined if `id` was never held, null while it is, else when its first read released it. */
  releasedAt(id: string): string | null | undefined {
    return this.holds.get(id);
  }
}
