import { randomUUID } from 'node:crypto';
import type { GatewayMetrics } from '../observability/metrics.ts';
import type { Caller } from '../upstream/caller.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';
import type { CreateWithdrawalIntentBody, WithdrawalIntentDTO } from '../upstream/types.ts';
import type { WithdrawalPostResult } from '../upstream/withdrawal-post-result.ts';
import type { IdempotencyStore, Submission } from './idempotency-store.ts';
import { RECORD_FORMAT } from './record-format.ts';
import { nowOrLater } from './store-calls.ts';
import { DataInvalidError, WithdrawalUserError, withdrawalUserError } from './user-errors.ts';

/**
 * What a sent POST leaves its key holding, decided from the client's WithdrawalPostResult
 * (docs/withdrawals.md, Where it is decided).
 */
export type SentOutcome =
  /** The intent exists, claimed for the submission's owner (or its submission stays: R3). */
  | { kind: 'created'; intent: WithdrawalIntentDTO }
  /** A business refusal of the REST API: nothing was created, and the refusal is the key's to keep. */
  | { kind: 'refusal_kept'; refusal: WithdrawalUserError }
  /** Nothing was created, and the failure says nothing of the withdrawal (R6). */
  | { kind: 'forgotten'; error: unknown }
  /** It may have created an intent: its submission stays registered, `ended`, for reconcilers. */
  | { kind: 'unknown'; error: unknown; ended: Submission };

export interface SendDeps {
  client: MerchantWalletClient;
  store: IdempotencyStore;
  now: () => number;
  metrics: Pick<GatewayMetrics, 'idempotency'> | undefined;
}

/** A POST about to leave: sent now, waited for until the request's deadline at the latest. */
export function newSubmission(caller: Caller, owner: string, leaseMs: number, now: number): Submission {
  return {
    v: RECORD_FORMAT,
    id: randomUUID(),
    owner,
    sentAt: now,
    endsBy: Math.min(caller.deadline ?? Number.POSITIVE_INFINITY, now + leaseMs),
    endedAt: null,
  };
}

/**
 * Sends one POST registered as `submission` of `payout` and settles the registration: a created
 * intent is claimed before it is returned (R3), a refusal or a definite failure removes the
 * submission, an unknown outcome leaves it, ended. Never throws.
 */
export async function sendSubmission(
  deps: SendDeps,
  caller: Caller,
  body: CreateWithdrawalIntentBody,
  key: string | null,
  payout: string,
  submission: Submission,
): Promise<SentOutcome> {
  const { store } = deps;
  const outcome = await outcomeOf(deps, caller, body, key);
  if (outcome.kind === 'created') {
    const { intent } = outcome;
    // The intent exists: answered whatever the store says (R3).
    await nowOrLater(async () => {
      const other = await store.claimIntent(intent.id, submission.owner);
      if (other === null) await store.removeSubmission(payout, submission.id);
      else deps.metrics?.idempotency('claim_conflict');
    });
    return outcome;
  }
  if (outcome.kind === 'unknown') {
    const ended = { ...submission, endedAt: deps.now() };
    await nowOrLater(() => store.putSubmission(payout, ended));
    return { ...outcome, ended };
  }
  await nowOrLater(() => store.removeSubmission(payout, submission.id));
  return outcome;
}

/** A SentOutcome before its submission is settled (an unknown one is not `ended` yet). */
type Decided = Exclude<SentOutcome, { kind: 'unknown' }> | { kind: 'unknown'; error: unknown };

/** The client's decision (WithdrawalPostResult), in what it means for the key. */
async function outcomeOf(
  deps: SendDeps,
  caller: Caller,
  body: CreateWithdrawalIntentBody,
  key: string | null,
): Promise<Decided> {
  let result: WithdrawalPostResult;
  try {
    result = await deps.client.createWithdrawalIntent(caller, body, key);
  } catch (error) {
    // A bug: it may have followed a POST that reached the REST API.
    return { kind: 'unknown', error };
  }
  switch (result.outcome) {
    case 'created':
      return { kind: 'created', intent: result.intent };
    case 'unknown':
      return { kind: 'unknown', error: result.error };
    case 'not_sent':
      return { kind: 'forgotten', error: result.error };
    case 'rejected': {
      const refusal = withdrawalUserError(result.code, result.error.message);
      if (!refusal) return { kind: 'forgotten', error: result.error };
      // The REST API refusing the wallet, said in the input's terms (R4).
      if (refusal instanceof DataInvalidError && refusal.field === null) {
        try {
          await requireWallet(deps.client, caller, body.senderWalletId, body.senderWalletId);
        } catch (error) {
          if (error instanceof WithdrawalUserError) return { kind: 'refusal_kept', refusal: error };
          // The GET failed: the POST's own refusal is the answer, not kept (R4).
          return { kind: 'forgotten', error: refusal };
        }
      }
      return { kind: 'refusal_kept', refusal };
    }
  }
}

/**
 * Throws DataInvalidError naming `input.walletId` when `walletId` is not one of the caller's
 * wallets. One GET by id, on refusal paths only (through the micro-cache).
 */
export async function requireWallet(
  client: MerchantWalletClient,
  caller: Caller,
  given: string,
  walletId: string | null,
): Promise<void> {
  if (walletId !== null && (await client.getWallet(caller, walletId))) return;
  throw new DataInvalidError(
    `input.walletId must be the id of one of your wallets; received "${given.slice(0, 128)}"`,
    ['input', 'walletId'],
  );
}
