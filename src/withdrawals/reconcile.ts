import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { isGatewayError } from '../errors/errors.ts';
import type { Caller } from '../upstream/caller.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';
import type { CreateWithdrawalIntentBody, WithdrawalIntentDTO } from '../upstream/types.ts';
import type { IdempotencyStore, Submission } from './idempotency-store.ts';
import type { StoreGuard } from './store-calls.ts';

/**
 * What a POST with no answer created, without ever guessing: rule R7 of docs/withdrawals.md (its
 * conditions, decisions and stated assumptions). An intent carries nothing of the request that
 * made it, so it is taken as a submission's only by content, time window and the store's claims.
 */

export interface ReconcileSettings {
  /** How far the REST API's clock may be from the gateway's (WITHDRAWAL_CLOCK_ALLOWANCE_MS). */
  clockAllowanceMs: number;
  /** How long after the gateway stopped waiting the REST API may still commit (WITHDRAWAL_LATE_COMMIT_MS). */
  lateCommitMs: number;
  /** Intents read per page of the list. */
  pageSize: number;
}

/** Why a retry could not decide; the client's OUTCOME_UNKNOWN says it as `reason`. */
export type AmbiguityReason =
  /** Another request with the same key is being processed right now. */
  | 'IN_PROGRESS'
  /** The window has not closed yet: the first POST may still commit. */
  | 'WINDOW_OPEN'
  /** The list could not be read back to the window's start (the REST API failed, or the call budget ran out). */
  | 'WINDOW_UNREAD'
  /** More than one unclaimed intent matches: the gateway will not pick one. */
  | 'SEVERAL_CANDIDATES'
  /** Another submission of the same payout, in flight or with no answer, could have created the candidate. */
  | 'COMPETING_ATTEMPT'
  /** The store lost its data after the candidate was made: whether it was handed to someone is unknown. */
  | 'REGISTRY_RESET';

export type Decision =
  | { kind: 'found'; intent: WithdrawalIntentDTO }
  | { kind: 'none' }
  | { kind: 'ambiguous'; reason: AmbiguityReason; candidates: string[]; retryAfterMs: number | null };

/** The submission's window, in the REST API's clock, and when it closes, in the gateway's. */
export function windowOf(submission: Submission, settings: ReconcileSettings) {
  const stoppedWaiting = submission.endedAt ?? submission.endsBy;
  return {
    from: submission.sentAt - settings.clockAllowanceMs,
    to: stoppedWaiting + settings.lateCommitMs + settings.clockAllowanceMs,
    closesAt: stoppedWaiting + settings.lateCommitMs,
  };
}

/** The payout a body makes, naming its submissions in the store: a hash of its content (R2). */
export function payoutOf(body: CreateWithdrawalIntentBody): string {
  return createHash('sha256')
    .update(
      [
        body.senderWalletId,
        normalizeDecimal(body.amount),
        body.currencyCode,
        body.serviceFeeMode,
        body.destination.type,
        body.destination.rail,
        body.destination.identifier,
      ].join('\u0000'),
    )
    .digest('base64url');
}

/**
 * Whether an intent the REST API lists has the body's content: everything payoutOf hashes but the
 * currency, which an intent does not carry (the gateway sends USDT only: input.ts).
 */
export function matchesBody(intent: WithdrawalIntentDTO, body: CreateWithdrawalIntentBody): boolean {
  return (
    intent.wallet.id === body.senderWalletId &&
    normalizeDecimal(intent.amount) === normalizeDecimal(body.amount) &&
    intent.serviceFeeMode === body.serviceFeeMode &&
    intent.destination.type === body.destination.type &&
    intent.destination.rail === body.destination.rail &&
    intent.destination.identifier === body.destination.identifier
  );
}

/** Time kept for reading the list once the window has closed; less left, and it is WINDOW_OPEN. */
const READ_RESERVE_MS = 2_000;
/** Pages of the intent list one reconciliation may read before it calls the window unread. */
const MAX_PAGES = 50;

/** What reconcileSubmission reads: the REST API, and the store's registries (guarded calls). */
export interface ReconcileReads {
  client: MerchantWalletClient;
  store: Pick<IdempotencyStore, 'intentOwners' | 'submissions' | 'registrySince'>;
  guard: StoreGuard;
  settings: ReconcileSettings;
  now: () => number;
}

/**
 * Decides what `submission` created, reading the caller's intents once its window has closed
 * (waiting for that within the deadline). Throws only a refused key and the store's refusal. The
 * list is read before the submissions and claims, so an intent it lists has its registration seen.
 */
export async function reconcileSubmission(
  reads: ReconcileReads,
  caller: Caller,
  body: CreateWithdrawalIntentBody,
  payout: string,
  submission: Submission,
): Promise<Decision> {
  const { client, store, guard, settings, now } = reads;
  const window = windowOf(submission, settings);
  const wait = window.closesAt - now();
  if (wait > 0) {
    if (caller.deadline !== undefined && Date.now() + wait + READ_RESERVE_MS > caller.deadline) {
      return { kind: 'ambiguous', reason: 'WINDOW_OPEN', candidates: [], retryAfterMs: wait };
    }
    await sleep(wait);
  }
  let read: Awaited<ReturnType<typeof readWindow>>;
  try {
    read = await readWindow(client, caller, window, settings.pageSize, MAX_PAGES);
  } catch (error) {
    if (isGatewayError(error) && (error.code === 'UNAUTHENTICATED' || error.code === 'FORBIDDEN')) {
      throw error;
    }
    return { kind: 'ambiguous', reason: 'WINDOW_UNREAD', candidates: [], retryAfterMs: null };
  }
  if (!read.complete) {
    return { kind: 'ambiguous', reason: 'WINDOW_UNREAD', candidates: [], retryAfterMs: null };
  }
  const matching = read.items.filter((intent) => matchesBody(intent, body));
  const owners = await guard(() => store.intentOwners(matching.map((intent) => intent.id)));
  const others = await guard(() => store.submissions(payout));
  const since = await guard(() => store.registrySince());
  return decide(submission, body, matching, owners, others, settings, now(), since);
}

/**
 * The caller's intents created inside `window` (REST clock, epoch ms), newest first: page 1, a
 * binary search for the first page reaching back to `window.to`, then pages in order past
 * `window.from` (R7). `complete` is false when `maxPages` did not suffice; a list found out of
 * order is read whole from page 1. Errors of the REST API propagate.
 */
export async function readWindow(
  client: MerchantWalletClient,
  caller: Caller,
  window: { from: number; to: number },
  pageSize: number,
  maxPages: number,
): Promise<{ items: WithdrawalIntentDTO[]; complete: boolean }> {
  let reads = 0;
  /** Pages the search probed, reused in sequence: intents only move later, so they stay valid. */
  const probed = new Map<number, Awaited<ReturnType<typeof fetchPage>>>();
  const read = async (page: number) => {
    const kept = probed.get(page);
    if (kept) return kept;
    return fetchPage(page);
  };
  const fetchPage = async (page: number) => {
    reads++;
    const { items, paging } = await client.listWithdrawalIntents(
      caller,
      { page, size: pageSize },
      { fresh: true },
    );
    const times = items.map((intent) => Date.parse(intent.createdAt));
    const ordered = times.every((time, i) => i === 0 || time <= (times[i - 1] as number));
    return {
      items,
      times,
      ordered,
      last: page >= paging.totalPages || items.length === 0,
      totalPages: paging.totalPages,
    };
  };
  const seen = new Map<string, WithdrawalIntentDTO>();
  let ordered = true;
  let previous = Number.POSITIVE_INFINITY;
  /** Takes a page read in sequence; true when the window's start is reached or the list ends. */
  const take = (page: Awaited<ReturnType<typeof read>>): boolean => {
    let reachedStart = false;
    page.items.forEach((intent, i) => {
      const createdAt = page.times[i] as number;
      if (createdAt > previous && !seen.has(intent.id)) ordered = false;
      previous = Math.min(previous, createdAt);
      if (createdAt < window.from) reachedStart = true;
      else if (createdAt <= window.to) seen.set(intent.id, intent);
    });
    return page.last || (ordered && reachedStart);
  };

  const first = await read(1);
  if (take(first)) return { items: [...seen.values()], complete: true };
  let page = 2;
  const oldest = first.times.at(-1) ?? Number.NEGATIVE_INFINITY;
  if (ordered && oldest > window.to && first.totalPages > 2) {
    let [low, high] = [2, first.totalPages];
    while (low < high) {
      if (reads >= maxPages) return { items: [], complete: false };
      const middle = Math.floor((low + high) / 2);
      const probe = await read(middle);
      probed.set(middle, probe);
      if (!probe.ordered) {
        ordered = false;
        break;
      }
      if (probe.items.length === 0 || (probe.times.at(-1) as number) <= window.to) high = middle;
      else low = middle + 1;
    }
    page = ordered ? low : 2;
    previous = Number.POSITIVE_INFINITY;
  }
  for (; reads < maxPages; page++) {
    if (take(await read(page))) return { items: [...seen.values()], complete: true };
  }
  return { items: [...seen.values()], complete: false };
}

/** R7's decision from the window's intents, their owners and the payout's other submissions. Pure. */
export function decide(
  submission: Submission,
  body: CreateWithdrawalIntentBody,
  intents: readonly WithdrawalIntentDTO[],
  owners: ReadonlyMap<string, string>,
  others: readonly Submission[],
  settings: ReconcileSettings,
  now: number,
  registrySince: number = Number.NEGATIVE_INFINITY,
): Decision {
  const window = windowOf(submission, settings);
  const inWindow = (createdAt: number, w: { from: number; to: number }) =>
    createdAt >= w.from && createdAt <= w.to;
  const candidates = intents.filter(
    (intent) =>
      matchesBody(intent, body) &&
      inWindow(Date.parse(intent.createdAt), window) &&
      (owners.get(intent.id) ?? submission.owner) === submission.owner,
  );
  const mine = candidates.find((intent) => owners.get(intent.id) === submission.owner);
  if (mine) return { kind: 'found', intent: mine };
  if (candidates.length === 0) return { kind: 'none' };
  const ids = candidates.map((intent) => intent.id);
  if (candidates.length > 1) {
    return { kind: 'ambiguous', reason: 'SEVERAL_CANDIDATES', candidates: ids, retryAfterMs: null };
  }
  const [candidate] = candidates as [WithdrawalIntentDTO];
  const createdAt = Date.parse(candidate.createdAt);
  if (createdAt < registrySince + settings.clockAllowanceMs) {
    return { kind: 'ambiguous', reason: 'REGISTRY_RESET', candidates: ids, retryAfterMs: null };
  }
  const rivals = others.filter(
    (other) => other.id !== submission.id && inWindow(createdAt, windowOf(other, settings)),
  );
  if (rivals.length > 0) {
    const settling = rivals.filter((rival) => rival.endedAt === null && rival.endsBy > now);
    const retryAfterMs = settling.length
      ? Math.max(...settling.map((rival) => windowOf(rival, settings).closesAt)) - now
      : null;
    return { kind: 'ambiguous', reason: 'COMPETING_ATTEMPT', candidates: ids, retryAfterMs };
  }
  return { kind: 'found', intent: candidate };
}

/** "10.50" and "10.5000000000000000" are the same amount. */
export function normalizeDecimal(value: string): string {
  const [whole = '0', fraction = ''] = value.split('.');
  const trimmed = fraction.replace(/0+$/, '');
  const integer = whole.replace(/^0+(?=\d)/, '');
  return trimmed ? `${integer}.${trimmed}` : integer;
}
