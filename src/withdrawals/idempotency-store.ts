import type { WithdrawalIntentDTO } from '../upstream/types.ts';

/**
 * What the gateway remembers so that a withdrawal is created at most once per idempotency key,
 * because the REST spec does not promise it. Three registries, shared by every process of a fleet
 * (`RedisIdempotencyStore`) or kept by one (`MemoryIdempotencyStore`):
 *
 * - **Key records**, per (caller scope, idempotency key), for 24 h: what the key's first request
 *   did. A request holds its key with a lease while its POST may be in flight, so no other
 *   request, in this process or another, sends meanwhile. Records are bounded per caller scope
 *   (in this process's store also per merchant, its keys together: StoreBounds.groupOf) and in all. At a bound, the oldest refused record is forgotten to make room (the caller's own at
 *   its bound): a refusal holds no money, since its key created nothing, so a retry that then finds
 *   the key free sends at most one POST, as after a definite failure. Pending and succeeded records
 *   are never forgotten: when they fill a bound a new key is refused unsent (StoreFullError), so
 *   no caller's refusals can take the room another's withdrawals need.
 * - **Submissions** (recorded POSTs), per payout (the content of the POST: wallet, amount, fee mode, destination): every
 *   POST that is in flight, or whose answer never came, with its window in time. Keyed or not,
 *   from any API key and any process, registered before it is sent and removed once its outcome is
 *   known. Reconciliation reads them to know who else could have created an intent it finds.
 * - **Claimed intents**: every intent id the gateway has handed to a caller, and to whom, written
 *   before the answer leaves. Reconciliation never hands out an intent claimed by someone else.
 *
 * Everything expires after IDEMPOTENCY_TTL_MS; nothing but a refusal is forgotten before.
 */

/** One POST that may have created an intent. Times are the gateway's clock, epoch ms. */
export interface Submission {
  /** The record format (record-format.ts); absent from 0.1.0's records, which are format 1. */
  v?: number;
  /** Random; names this POST in the payout's submissions. */
  id: string;
  /** Whose it is: `owner` of the key (see ownerOfKey), or of the unkeyed request. */
  owner: string;
  /** Taken just before the POST left. */
  sentAt: number;
  /** The latest time the gateway may still be waiting for its answer (the request's deadline). */
  endsBy: number;
  /** When the gateway stopped waiting without an answer (OUTCOME_UNKNOWN); null while in flight. */
  endedAt: number | null;
}

/** `v`: the record format (record-format.ts); absent from 0.1.0's records, which are format 1. */
export type IdempotencyRecord =
  /**
   * A request of the key is under way, or ended without an answer. `attempt` (the stored field's
   * name; record-format.ts): its submission, once sent (or about to be); absent when nothing was
   * sent for this key yet.
   */
  | { v?: number; state: 'pending'; fingerprint: string; startedAt: number; attempt?: Submission }
  | { v?: number; state: 'succeeded'; fingerprint: string; startedAt: number; intent: WithdrawalIntentDTO }
  /**
   * A definite business refusal (a typed UserError): replayed as is. `field` is DataInvalidError's
   * (absent from records written before it was kept: replayed as null).
   */
  | {
      v?: number;
      state: 'refused';
      fingerprint: string;
      startedAt: number;
      code: string;
      message: string;
      field?: string[] | null;
    };

export type PendingRecord = Extract<IdempotencyRecord, { state: 'pending' }>;

/** A key's record, and whether a request holds its lease right now. */
export interface Held {
  record: IdempotencyRecord;
  leased: boolean;
}

/** A new key could not be claimed: its caller scope, or the whole store, holds as many as allowed. */
export class StoreFullError extends Error {
  readonly scope: 'caller' | 'store';

  constructor(scope: 'caller' | 'store') {
    super(
      scope === 'caller'
        ? "this API key (or its merchant's keys together) holds the most idempotency keys allowed"
        : 'the idempotency store is full',
    );
    this.name = 'StoreFullError';
    this.scope = scope;
  }
}

/**
 * A write that decides whether a POST may be sent was not acknowledged by as many replicas as
 * REDIS_MIN_REPLICA_ACKS asks for within the bound: a failover now could lose it, so the POST is
 * not sent.
 */
export class ReplicaAckError extends Error {
  constructor(acknowledged: number, required: number) {
    super(`the idempotency record reached ${acknowledged} of the ${required} Redis replicas required`);
    this.name = 'ReplicaAckError';
  }
}

/** The store was not asked (it is known not to answer right now): nothing was written. */
export class NotAskedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotAskedError';
  }
}

export interface IdempotencyStore {
  /**
   * Claims the key for a new request when nobody holds it, atomically, with a lease of `leaseMs`
   * that names `holder`; otherwise returns what holds it. Throws StoreFullError when the key is new
   * and a bound is reached.
   */
  claim(
    scope: string,
    key: string,
    record: PendingRecord,
    leaseMs: number,
    holder: string,
  ): Promise<Held | null>;
  /** What holds the key, or null. */
  read(scope: string, key: string): Promise<Held | null>;
  /**
   * Takes over a pending key whose lease ran out: replaces `expected` with `next` and leases it to
   * `holder`, atomically; false when the record changed or a lease was taken meanwhile.
   */
  takeOver(
    scope: string,
    key: string,
    expected: PendingRecord,
    next: PendingRecord,
    leaseMs: number,
    holder: string,
  ): Promise<boolean>;
  /** Replaces the record while `holder` holds the lease, keeping it; false when it does not. */
  update(scope: string, key: string, record: PendingRecord, holder: string): Promise<boolean>;
  /**
   * Ends `holder`'s hold: stores `record` (null: forgets the key, record and lease, because nothing
   * was created) and gives the lease up. Fenced: only while `holder` still holds the lease, or
   * nobody does and the record is still `expected` (the last one `holder` wrote). A holder that was
   * paused past its lease, and overtaken, changes nothing; false then.
   */
  settle(
    scope: string,
    key: string,
    holder: string,
    expected: PendingRecord,
    record: IdempotencyRecord | null,
  ): Promise<boolean>;

  /** Registers (or replaces) a submission of a payout. Called before the POST is sent. */
  putSubmission(payout: string, submission: Submission): Promise<void>;
  /** Removes a submission whose outcome is known. */
  removeSubmission(payout: string, submissionId: string): Promise<void>;
  /** The payout's submissions that are in flight or ended without an answer. */
  submissions(payout: string): Promise<Submission[]>;

  /**
   * Records that `intentId` was handed to `owner`, unless it was handed to someone else already:
   * returns null when the intent is now (or was already) `owner`'s, or the other owner.
   */
  claimIntent(intentId: string, owner: string): Promise<string | null>;
  /** The owners of those of `intentIds` that were handed to a caller. */
  intentOwners(intentIds: readonly string[]): Promise<Map<string, string>>;

  /**
   * Since when (epoch ms, the gateway's clock) the submissions and claims are complete: the last time
   * the store was seen to lose its data (a Redis restart without persistence, a flush), or -Infinity.
   * Reconciliation cannot vouch for an intent made before it: its claim may be lost.
   */
  registrySince(): Promise<number>;

  /** Whether the store can be reached (for /readyz). */
  ping(): Promise<boolean>;
}

/** How long a key's first result is replayed: the contract, not a tuning knob. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** The owner name of a key's submissions and intents. */
export function ownerOfKey(scope: string, key: string): string {
  return `key:${scope}:${key}`;
}

/** The owner name of an unkeyed request's submission and intent. */
export function ownerOfUnkeyed(submissionId: string): string {
  return `unkeyed:${submissionId}`;
}

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
   * The merchant of a caller scope (merchants.ts): one merchant's keys together hold at most
   * MERCHANT_KEYS_FACTOR × `maxKeysPerCaller`, so its many keys cannot fill the whole store, while
   * each key keeps its own bound (one integration's records never use up its siblings' room).
   * Only the bound is shared: a key's records stay its own (idempotency keys are per API key).
   * Default: each scope its own merchant.
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
   * Synchronous from the read to the write, so two claims of one key cannot both find it free.
   * At the caller's bound, the caller's own oldest refusal is forgotten to make room; at its
   * merchant's (`groupOf`), the oldest of the merchant's keys'; at the store's, the oldest of any
   * caller's. Pending and succeeded records are never forgotten:
   * when they alone fill the bound, the claim is refused (StoreFullError).
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
   * Forgets the oldest refused record of `refusals` (a scope's, or all): true when one was
   * forgotten. A refusal holds no money: nothing was created for its key, as when a definite
   * failure forgets a key, so a retry that finds the key free claims it anew and sends at most one
   * POST. Only a refused record nobody leases is forgotten (a refusal is never leased; checked all
   * the same).
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
