import { randomUUID } from 'node:crypto';
import type { Held, IdempotencyRecord, IdempotencyStore, PendingRecord } from './idempotency-store.ts';
import { nowOrLater, type StoreGuard, wasAsked } from './store-calls.ts';

/**
 * One request's hold on an idempotency key (rule R1): its name on the key's lease and the record it
 * last wrote, by both of which every write it makes to the key is fenced. Calls are guarded (R8).
 */
export class KeyLease {
  readonly holder = randomUUID();
  /** The record this holder last wrote while holding the key: what a fenced write expects. */
  record: PendingRecord;
  private readonly store: IdempotencyStore;
  private readonly guard: StoreGuard;
  private readonly leaseMs: number;
  private readonly scope: string;
  private readonly key: string;
  private readonly fresh: PendingRecord;

  constructor(
    store: IdempotencyStore,
    guard: StoreGuard,
    leaseMs: number,
    scope: string,
    key: string,
    fresh: PendingRecord,
  ) {
    this.store = store;
    this.guard = guard;
    this.leaseMs = leaseMs;
    this.scope = scope;
    this.key = key;
    this.fresh = fresh;
    this.record = fresh;
  }

  /**
   * Claims the key with the fresh record (null: held now), else answers what holds it; a claim
   * whose answer was lost is freed once the store answers (R1).
   */
  claim(): Promise<Held | null> {
    const { scope, key, holder, fresh } = this;
    return this.guard(() => this.store.claim(scope, key, fresh, this.leaseMs, holder)).catch(
      async (error: unknown) => {
        if (wasAsked(error)) await nowOrLater(() => this.store.settle(scope, key, holder, fresh, null));
        throw error;
      },
    );
  }

  /** What holds the key now, or null. */
  read(): Promise<Held | null> {
    return this.guard(() => this.store.read(this.scope, this.key));
  }

  /** Takes over `found`, a pending record nobody holds, unchanged; false when another took it first. */
  async takeOver(found: PendingRecord): Promise<boolean> {
    const { scope, key, holder } = this;
    const next: PendingRecord = { ...found };
    const taken = await this.guard(() =>
      this.store.takeOver(scope, key, found, next, this.leaseMs, holder),
    ).catch(async (error: unknown) => {
      // Gives up the lease a takeover may still take, keeping the record as it was (R1).
      if (wasAsked(error)) await nowOrLater(() => this.store.settle(scope, key, holder, next, next));
      throw error;
    });
    if (taken) this.record = next;
    return taken;
  }

  /** Writes `next` while still the holder (not paused past the lease and overtaken); false if not. */
  async update(next: PendingRecord): Promise<boolean> {
    const updated = await this.guard(() => this.store.update(this.scope, this.key, next, this.holder));
    if (updated) this.record = next;
    return updated;
  }

  /** Ends the hold with the key's outcome (null: the key is forgotten), now or once the store answers. */
  settle(outcome: IdempotencyRecord | null, then?: () => Promise<unknown>): Promise<void> {
    const expected = this.record;
    return nowOrLater(async () => {
      await this.store.settle(this.scope, this.key, this.holder, expected, outcome);
      await then?.();
    });
  }
}
