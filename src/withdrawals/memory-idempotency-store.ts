import {
  type Held,
  IDEMPOTENCY_TTL_MS,
  type IdempotencyRecord,
  type IdempotencyStore,
  type PendingRecord,
  StoreFullError,
  type Submission,
} from './idempotency-store.ts';

/** A merchant's keys together hold at most this many times one key's bound (StoreBounds.groupOf). */
export const MERCHANT_KEYS_FACTOR = 4;

export interface StoreBounds {
  /** Keys one caller scope (one API key) may hold at once (IDEMPOTENCY_MAX_KEYS_PER_CALLER). */
  maxKeysPerCaller: number;
  /** Keys the whole in-process store may hold (IDEMPOTENCY_MAX_KEYS); Redis is bounded by its maxmemory. */
  maxKeys: number;
  /** Told of each refused record forgotten to make room (the `evicted_refusal` metric). */
  onEvicted?: () => void;
  /**
   * The merchant of a caller scope (merchants.ts), whose keys together hold at most
   * MERCHANT_KEYS_FACTOR × `maxKeysPerCaller`; only the bound is shared, each key's records stay
   * its own (R4). Default: each scope its own merchant.
   */
  groupOf?: (scope: string) => string;
}

interface Expiring<T> {
  value: T;
  expiresAt: number;
}

/** A key's record, with its names, so that the orders below can hold the entry itself. */
interface KeyEntry extends Expiring<IdempotencyRecord> {
  scope: string;
  key: string;
  /** The bound it counts against (StoreBounds.groupOf), as when it was claimed. */
  group: string;
}

/**
 * The store of one process: plain maps. Key records are dropped as they expire (they expire in the
 * order they were made: one TTL for all), the other registries swept of expired entries as they
 * grow. At a bound, the oldest refusal is forgotten to make room (see evictRefusal).
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  /** scope → key → record. */
  private readonly records = new Map<string, Map<string, KeyEntry>>();
  /** Every key record, oldest first: the order they expire in. */
  private readonly byAge = new Set<KeyEntry>();
  /** The refused records, oldest refusal first: all of them, and each group's (StoreBounds.groupOf). */
  private readonly refusals = new Set<KeyEntry>();
  private readonly scopeRefusals = new Map<string, Set<KeyEntry>>();
  private readonly groupRefusals = new Map<string, Set<KeyEntry>>();
  /** Records held per group. */
  private readonly groupSizes = new Map<string, number>();
  /** id(scope, key) → the lease: until when, and whose. */
  private readonly leases = new Map<string, { until: number; holder: string }>();
  private readonly payouts = new Map<string, Map<string, Expiring<Submission>>>();
  private readonly owners = new Map<string, Expiring<string>>();
  private keyCount = 0;
  private writes = 0;
  private readonly bounds: StoreBounds;
  private readonly now: () => number;

  constructor(bounds: StoreBounds, now: () => number = Date.now) {
    this.bounds = bounds;
    this.now = now;
  }

  /** Keys held now, expired ones not counted: for the flood measurement and tests. */
  get size(): number {
    this.expire();
    return this.keyCount;
  }

  /** Refused records held now, expired ones not counted: the ones a claim may forget. */
  get refusedSize(): number {
    this.expire();
    return this.refusals.size;
  }

  /**
   * Synchronous from the read to the write, so two claims of one key cannot both find it free. At
   * each bound (the caller's, its merchant's, the store's) the oldest refusal within it makes room
   * (R11); StoreFullError when none is left.
   */
  async claim(
    scope: string,
    key: string,
    record: PendingRecord,
    leaseMs: number,
    holder: string,
  ): Promise<Held | null> {
    const held = this.heldNow(scope, key);
    if (held) return held;
    // An expired record of this key is replaced, not counted twice.
    const expired = this.records.get(scope)?.get(key);
    if (expired) this.remove(expired);
    this.expire();
    while ((this.records.get(scope)?.size ?? 0) >= this.bounds.maxKeysPerCaller) {
      if (!this.evictRefusal(this.scopeRefusals.get(scope))) throw new StoreFullError('caller');
    }
    const group = this.bounds.groupOf?.(scope) ?? scope;
    while ((this.groupSizes.get(group) ?? 0) >= this.bounds.maxKeysPerCaller * MERCHANT_KEYS_FACTOR) {
      if (!this.evictRefusal(this.groupRefusals.get(group))) throw new StoreFullError('caller');
    }
    while (this.keyCount >= this.bounds.maxKeys) {
      if (!this.evictRefusal(this.refusals)) throw new StoreFullError('store');
    }
    let keys = this.records.get(scope);
    if (!keys) {
      keys = new Map();
      this.records.set(scope, keys);
    }
    const entry: KeyEntry = { scope, key, group, value: record, expiresAt: this.now() + IDEMPOTENCY_TTL_MS };
    keys.set(key, entry);
    this.byAge.add(entry);
    this.keyCount++;
    this.groupSizes.set(group, (this.groupSizes.get(group) ?? 0) + 1);
    this.leases.set(id(scope, key), { until: this.now() + leaseMs, holder });
    this.wrote();
    return null;
  }

  async read(scope: string, key: string): Promise<Held | null> {
    return this.heldNow(scope, key);
  }

  async takeOver(
    scope: string,
    key: string,
    expected: PendingRecord,
    next: PendingRecord,
    leaseMs: number,
    holder: string,
  ): Promise<boolean> {
    const entry = this.records.get(scope)?.get(key);
    if (entry?.value !== expected || this.leaseOf(scope, key)) return false;
    entry.value = next;
    this.leases.set(id(scope, key), { until: this.now() + leaseMs, holder });
    return true;
  }

  async update(scope: string, key: string, record: PendingRecord, holder: string): Promise<boolean> {
    const entry = this.records.get(scope)?.get(key);
    if (!entry || this.leaseOf(scope, key) !== holder) return false;
    entry.value = record;
    return true;
  }

  async settle(
    scope: string,
    key: string,
    holder: string,
    expected: PendingRecord,
    record: IdempotencyRecord | null,
  ): Promise<boolean> {
    const entry = this.records.get(scope)?.get(key);
    const lease = this.leaseOf(scope, key);
    if (!entry || (lease !== holder && (lease !== undefined || entry.value !== expected))) return false;
    this.leases.delete(id(scope, key));
    if (!record) {
      this.remove(entry);
    } else {
      entry.value = record;
      if (record.state === 'refused') {
        this.refusals.add(entry);
        for (const [map, name] of [
          [this.scopeRefusals, entry.scope],
          [this.groupRefusals, entry.group],
        ] as const) {
          let mine = map.get(name);
          if (!mine) {
            mine = new Set();
            map.set(name, mine);
          }
          mine.add(entry);
        }
      }
    }
    return true;
  }

  async putSubmission(payout: string, submission: Submission): Promise<void> {
    let submissions = this.payouts.get(payout);
    if (!submissions) {
      submissions = new Map();
      this.payouts.set(payout, submissions);
    }
    submissions.set(submission.id, { value: submission, expiresAt: this.now() + IDEMPOTENCY_TTL_MS });
    this.wrote();
  }

  async removeSubmission(payout: string, submissionId: string): Promise<void> {
    const submissions = this.payouts.get(payout);
    submissions?.delete(submissionId);
    if (submissions?.size === 0) this.payouts.delete(payout);
  }

  async submissions(payout: string): Promise<Submission[]> {
    const now = this.now();
    return [...(this.payouts.get(payout)?.values() ?? [])]
      .filter((entry) => entry.expiresAt > now)
      .map((entry) => entry.value);
  }

  async claimIntent(intentId: string, owner: string): Promise<string | null> {
    const current = this.owners.get(intentId);
    if (current && current.expiresAt > this.now()) return current.value === owner ? null : current.value;
    this.owners.set(intentId, { value: owner, expiresAt: this.now() + IDEMPOTENCY_TTL_MS });
    this.wrote();
    return null;
  }

  async intentOwners(intentIds: readonly string[]): Promise<Map<string, string>> {
    const now = this.now();
    const found = new Map<string, string>();
    for (const intentId of intentIds) {
      const entry = this.owners.get(intentId);
      if (entry && entry.expiresAt > now) found.set(intentId, entry.value);
    }
    return found;
  }

  /** A process's memory is never partly lost: a restart forgets keys and claims alike (documented). */
  async registrySince(): Promise<number> {
    return Number.NEGATIVE_INFINITY;
  }

  async ping(): Promise<boolean> {
    return true;
  }

  /** What holds the key now, or null. */
  private heldNow(scope: string, key: string): Held | null {
    const entry = this.records.get(scope)?.get(key);
    if (!entry || entry.expiresAt <= this.now()) return null;
    return { record: entry.value, leased: this.leaseOf(scope, key) !== undefined };
  }

  /** Who holds the key's lease now, if anyone. */
  private leaseOf(scope: string, key: string): string | undefined {
    const lease = this.leases.get(id(scope, key));
    return lease && lease.until > this.now() ? lease.holder : undefined;
  }

  /**
   * Forgets the oldest refused record of `refusals` (a scope's, a group's, or all; safe by R11); true
   * when one was. Only an unleased refusal goes (a refusal is never leased; checked all the same).
   */
  private evictRefusal(refusals: Set<KeyEntry> | undefined): boolean {
    for (const entry of refusals ?? []) {
      if (entry.value.state !== 'refused' || this.leaseOf(entry.scope, entry.key) !== undefined) {
        this.unrefuse(entry);
        continue;
      }
      this.remove(entry);
      this.bounds.onEvicted?.();
      return true;
    }
    return false;
  }

  /** Drops a key's record (not its lease) from every index. */
  private remove(entry: KeyEntry): void {
    const keys = this.records.get(entry.scope);
    if (keys?.get(entry.key) !== entry) return;
    keys.delete(entry.key);
    if (keys.size === 0) this.records.delete(entry.scope);
    this.byAge.delete(entry);
    this.unrefuse(entry);
    this.keyCount--;
    const left = (this.groupSizes.get(entry.group) ?? 1) - 1;
    if (left > 0) this.groupSizes.set(entry.group, left);
    else this.groupSizes.delete(entry.group);
  }

  private unrefuse(entry: KeyEntry): void {
    if (!this.refusals.delete(entry)) return;
    for (const [map, name] of [
      [this.scopeRefusals, entry.scope],
      [this.groupRefusals, entry.group],
    ] as const) {
      const mine = map.get(name);
      mine?.delete(entry);
      if (mine?.size === 0) map.delete(name);
    }
  }

  /** Drops the key records that expired: the oldest first, stopping at the first one still live. */
  private expire(): void {
    const now = this.now();
    for (const entry of this.byAge) {
      if (entry.expiresAt > now) break;
      this.remove(entry);
    }
  }

  /** Every 10,000 writes, drop what expired, so memory follows what is live. */
  private wrote(): void {
    if (++this.writes % 10_000 === 0) this.sweep();
  }

  private sweep(): void {
    const now = this.now();
    this.expire();
    for (const [leased, lease] of this.leases) if (lease.until <= now) this.leases.delete(leased);
    for (const [payout, submissions] of this.payouts) {
      for (const [submissionId, entry] of submissions)
        if (entry.expiresAt <= now) submissions.delete(submissionId);
      if (submissions.size === 0) this.payouts.delete(payout);
    }
    for (const [intentId, entry] of this.owners) if (entry.expiresAt <= now) this.owners.delete(intentId);
  }
}

function id(scope: string, key: string): string {
  return `${scope}\u0000${key}`;
}
