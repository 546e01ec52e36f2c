import type { WithdrawalIntentDTO } from '../upstream/types.ts';

/**
 * What the gateway remembers so that a withdrawal is created at most once per idempotency key,
 * because the REST spec does not promise it. Three registries, shared by every process of a fleet
 * (`RedisIdempotencyStore`, redis-idempotency-store.ts) or kept by one (`MemoryIdempotencyStore`,
 * memory-idempotency-store.ts):
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
