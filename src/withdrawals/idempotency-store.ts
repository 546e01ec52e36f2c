import { LRUCache } from 'lru-cache';
import type { WithdrawalIntentDTO } from '../upstream/types.ts';

/**
 * Gateway-side idempotency for createWithdrawalIntent, because the REST spec does not promise it.
 * For 24 h, (caller scope, idempotency key) maps to what the first attempt did. The store is an
 * interface so that several gateway processes can share one (e.g. Redis with SET NX and a TTL);
 * `MemoryIdempotencyStore` is the single-process implementation.
 */

export type IdempotencyRecord =
  /** An attempt is under way, or ended without an answer (OUTCOME_UNKNOWN): reconcile before retrying. */
  | { state: 'pending'; fingerprint: string; startedAt: number }
  | { state: 'succeeded'; fingerprint: string; startedAt: number; intent: WithdrawalIntentDTO }
  /** A definite refusal (a typed business error): replayed as is. */
  | { state: 'refused'; fingerprint: string; startedAt: number; code: string; message: string };

export interface IdempotencyStore {
  /**
   * Claims the key for a new attempt when it is free, atomically; otherwise returns the record
   * that holds it.
   */
  claim(scope: string, key: string, record: IdempotencyRecord): Promise<IdempotencyRecord | null>;
  save(scope: string, key: string, record: IdempotencyRecord): Promise<void>;
  /** Whether an intent id was already handed out for another key of this scope. */
  isClaimedIntent(scope: string, intentId: string): Promise<boolean>;
}

/** How long a key's first result is replayed: the contract, not a tuning knob. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records: LRUCache<string, IdempotencyRecord>;
  private readonly intents: LRUCache<string, true>;

  /** `maxEntries` bounds the keys kept (IDEMPOTENCY_MAX_KEYS); least recently used go first. */
  constructor(options: { maxEntries: number }) {
    const max = options.maxEntries;
    this.records = new LRUCache({ max, ttl: IDEMPOTENCY_TTL_MS });
    this.intents = new LRUCache({ max, ttl: IDEMPOTENCY_TTL_MS });
  }

  async claim(scope: string, key: string, record: IdempotencyRecord): Promise<IdempotencyRecord | null> {
    const id = `${scope}\u0000${key}`;
    const existing = this.records.get(id);
    if (existing) return existing;
    this.records.set(id, record);
    return null;
  }

  async save(scope: string, key: string, record: IdempotencyRecord): Promise<void> {
    this.records.set(`${scope}\u0000${key}`, record);
    if (record.state === 'succeeded') this.intents.set(`${scope}\u0000${record.intent.id}`, true);
  }

  async isClaimedIntent(scope: string, intentId: string): Promise<boolean> {
    return this.intents.has(`${scope}\u0000${intentId}`);
  }
}
