import { LRUCache } from 'lru-cache';
import type { WithdrawalIntentDTO } from '../upstream/types.ts';

/**
 * Gateway-side idempotency for createWithdrawalIntent, because the REST spec does not promise it.
 * For 24 h, (caller scope, idempotency key) maps to what the first attempt did. The store is an
 * interface so that every process of a fleet can share one: `MemoryIdempotencyStore` serves one
 * process, `RedisIdempotencyStore` a fleet.
 *
 * Leases. An attempt holds its key with a lease while its POST may be in flight: no other attempt,
 * in this process or another, may send while the lease lives. The holder gives the lease up when
 * it saves an outcome, or releases it when the outcome is unknown. A holder that dies (a crashed
 * replica) leaves a pending record whose lease runs out; the next attempt takes the key over,
 * atomically, and reconciles before it ever sends again. The lease outlives any POST (it is longer
 * than the request deadline), so a slow holder is never overtaken.
 */

export type IdempotencyRecord =
  /** An attempt is under way, or ended without an answer (OUTCOME_UNKNOWN): reconcile before retrying. */
  | { state: 'pending'; fingerprint: string; startedAt: number }
  | { state: 'succeeded'; fingerprint: string; startedAt: number; intent: WithdrawalIntentDTO }
  /** A definite refusal (a typed business error): replayed as is. */
  | { state: 'refused'; fingerprint: string; startedAt: number; code: string; message: string };

export type PendingRecord = Extract<IdempotencyRecord, { state: 'pending' }>;

/** A key's record, and whether an attempt holds its lease right now. */
export interface Held {
  record: IdempotencyRecord;
  leased: boolean;
}

export interface IdempotencyStore {
  /**
   * Claims the key for a new attempt, with a lease of `leaseMs`, when it is free, atomically;
   * otherwise returns what holds it.
   */
  claim(scope: string, key: string, record: PendingRecord, leaseMs: number): Promise<Held | null>;
  /** What holds the key, or null. */
  read(scope: string, key: string): Promise<Held | null>;
  /**
   * Takes over a pending key whose lease ran out: replaces `expected` with `next` and leases it,
   * atomically; false when the record changed or a lease was taken meanwhile.
   */
  takeOver(
    scope: string,
    key: string,
    expected: PendingRecord,
    next: PendingRecord,
    leaseMs: number,
  ): Promise<boolean>;
  /** Stores the key's record and gives its lease up. */
  save(scope: string, key: string, record: IdempotencyRecord): Promise<void>;
  /** Whether an intent id was already handed out for another key of this scope. */
  isClaimedIntent(scope: string, intentId: string): Promise<boolean>;
  /** Whether the store can be reached (for /readyz). */
  ping(): Promise<boolean>;
}

/** How long a key's first result is replayed: the contract, not a tuning knob. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records: LRUCache<string, IdempotencyRecord>;
  private readonly intents: LRUCache<string, true>;
  private readonly leases: LRUCache<string, true>;

  /** `maxEntries` bounds the keys kept (IDEMPOTENCY_MAX_KEYS); least recently used go first. */
  constructor(options: { maxEntries: number }) {
    const max = options.maxEntries;
    this.records = new LRUCache({ max, ttl: IDEMPOTENCY_TTL_MS });
    this.intents = new LRUCache({ max, ttl: IDEMPOTENCY_TTL_MS });
    this.leases = new LRUCache({ max, ttl: 1, ttlAutopurge: false });
  }

  async claim(scope: string, key: string, record: PendingRecord, leaseMs: number): Promise<Held | null> {
    const held = await this.read(scope, key);
    if (held) return held;
    this.records.set(id(scope, key), record);
    this.leases.set(id(scope, key), true, { ttl: leaseMs });
    return null;
  }

  async read(scope: string, key: string): Promise<Held | null> {
    const record = this.records.get(id(scope, key));
    return record ? { record, leased: this.leases.has(id(scope, key)) } : null;
  }

  async takeOver(
    scope: string,
    key: string,
    expected: PendingRecord,
    next: PendingRecord,
    leaseMs: number,
  ): Promise<boolean> {
    const current = this.records.get(id(scope, key));
    if (current !== expected || this.leases.has(id(scope, key))) return false;
    this.records.set(id(scope, key), next);
    this.leases.set(id(scope, key), true, { ttl: leaseMs });
    return true;
  }

  async save(scope: string, key: string, record: IdempotencyRecord): Promise<void> {
    this.records.set(id(scope, key), record);
    this.leases.delete(id(scope, key));
    if (record.state === 'succeeded') this.intents.set(id(scope, record.intent.id), true);
  }

  async isClaimedIntent(scope: string, intentId: string): Promise<boolean> {
    return this.intents.has(id(scope, intentId));
  }

  async ping(): Promise<boolean> {
    return true;
  }
}

function id(scope: string, key: string): string {
  return `${scope}\u0000${key}`;
}
