import type { WithdrawalIntentDTO } from '../upstream/types.ts';

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

/** `v` as Submission's. */
export type IdempotencyRecord =
  /** Under way or ended unanswered; `attempt` (stored name): its submission, named just before sending. */
  | { v?: number; state: 'pending'; fingerprint: string; startedAt: number; attempt?: Submission }
  | { v?: number; state: 'succeeded'; fingerprint: string; startedAt: number; intent: WithdrawalIntentDTO }
  /** A business refusal (a UserError), replayed as is (R4); `field`: DataInvalidError's (absent: null). */
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

/** A write the POST depends on reached fewer replicas than REDIS_MIN_REPLICA_ACKS in time: not sent. */
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

/**
 * What the gateway remembers so that a withdrawal is created at most once per idempotency key
 * (docs/withdrawals.md, whose rules R1–R11 the code names). Shared by a fleet (RedisIdempotencyStore)
 * or kept by one process (MemoryIdempotencyStore); everything expires after IDEMPOTENCY_TTL_MS.
 *
 * - **Key records**, per (caller scope, idempotency key): what the key's first request did, written
 *   under the lease of the one request that may send (R1). Bounded per caller scope and in all (in
 *   process also per merchant: StoreBounds.groupOf); only a refusal is forgotten early (R11).
 * - **Submissions**, per payout: every POST in flight or unanswered, registered before it leaves (R2).
 * - **Claimed intents**: each intent handed to a caller, and to whom, before the answer leaves (R3).
 */
export interface IdempotencyStore {
  /**
   * Claims a key nobody holds, atomically, leased to `holder` for `leaseMs`; else returns what holds
   * it. StoreFullError when the key is new and only pending or succeeded records fill a bound.
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
   * Takes over a pending key whose lease ran out: `expected` becomes `next`, leased to `holder`,
   * atomically; false when the record changed or a lease was taken meanwhile.
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
   * Stores `record` (null: forgets the key, nothing was created) and gives the lease up. Fenced: only
   * while `holder` holds the lease, or nobody does and the record is still `expected`; else false.
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

  /** Records `intentId` as `owner`'s unless another has it: null when it is `owner`'s, else the other. */
  claimIntent(intentId: string, owner: string): Promise<string | null>;
  /** The owners of those of `intentIds` that were handed to a caller. */
  intentOwners(intentIds: readonly string[]): Promise<Map<string, string>>;

  /**
   * Since when (epoch ms, the gateway's clock) the submissions and claims are complete: when the store
   * was last seen to lose its data, or -Infinity. Reconciliation vouches for no intent made before (R7).
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
