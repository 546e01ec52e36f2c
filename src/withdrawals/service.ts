import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { SpanStatusCode, type Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { GatewayError, isGatewayError, outcomeStillUnknown } from '../errors.ts';
import { globalIdOf } from '../global-ids.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import { canonicalJson } from '../shared/canonical-json.ts';
import type { Caller } from '../upstream/caller.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';
import type { CreateWithdrawalIntentBody, WithdrawalIntentDTO } from '../upstream/types.ts';
import {
  type Attempt,
  IDEMPOTENCY_TTL_MS,
  type IdempotencyRecord,
  type IdempotencyStore,
  NotAskedError,
  ownerOfKey,
  ownerOfUnkeyed,
  type PendingRecord,
  ReplicaAckError,
  StoreFullError,
} from './idempotency-store.ts';
import { type CreateWithdrawalInput, parseCreateWithdrawalInput } from './input.ts';
import {
  type Decision,
  decide,
  matchesBody,
  payoutOf,
  type ReconcileSettings,
  readWindow,
  windowOf,
} from './reconcile.ts';
import { RECORD_FORMAT, UnknownRecordFormatError } from './record-format.ts';
import {
  DataInvalidError,
  refusalDetails,
  replayedUserError,
  toWithdrawalUserError,
  userError,
  WithdrawalUserError,
} from './user-errors.ts';

/** Time a retry keeps for reading the list once the window has closed; less, and it answers WINDOW_OPEN. */
const READ_RESERVE_MS = 2_000;
/** Pages of the intent list one reconciliation may read before it calls the window unread. */
const MAX_PAGES = 50;

export interface WithdrawalSettings {
  /** How long an attempt holds its key (IDEMPOTENCY_LEASE_MS); must outlive any POST (config.ts checks it). */
  leaseMs: number;
  /** The windows of reconciliation (reconcile.ts). */
  reconcile: ReconcileSettings;
}

/** What an error from the POST says about what happened upstream. */
type Outcome =
  /** A business refusal (a typed UserError): nothing was created; replayed for the key. */
  | 'refused'
  /** A definite failure that created nothing and says nothing about the key (401, 403, other 4xx, not sent). */
  | 'definite'
  /** The POST may have been created: timeout, reset, 5xx, an unreadable 2xx. */
  | 'unknown';

/**
 * Creating a withdrawal at most once per idempotency key, against a REST API that does not
 * deduplicate, with other keys, unkeyed requests and other replicas acting at the same time
 * (the guarantee, as invariants, is in the docs' Withdrawals page):
 *
 * - concurrent attempts with the same key in this process join the first one; across processes
 *   the key's lease (idempotency-store.ts) lets one attempt send at a time, and every write an
 *   attempt makes to its key is fenced by its lease (a holder paused past it changes nothing);
 * - every POST, keyed or not, is registered as an attempt of its payout before it is sent, and
 *   every intent handed to a caller is claimed for it before the answer leaves;
 * - a success or a business refusal is kept for 24 h and replayed; the same key with a different
 *   input is IdempotencyKeyReusedError;
 * - a definite failure (401, 403, another 4xx, not sent) creates nothing and leaves nothing: the
 *   key is forgotten, and a retry asks the REST API again;
 * - an unknown outcome (OUTCOME_UNKNOWN) leaves the key pending with its attempt. A retry
 *   reconciles (reconcile.ts): it returns the one intent the attempt can have created, sends again
 *   when a fully read, closed window holds none, and otherwise sends nothing and answers
 *   OUTCOME_UNKNOWN with a reason, keeping the key blocked.
 *
 * Without a key the POST is sent once and never retried; its attempt and intent are registered
 * all the same, so no keyed retry can take its intent.
 */
export class WithdrawalService {
  private readonly inFlight = new Map<
    string,
    { fingerprint: string; result: Promise<WithdrawalIntentDTO> }
  >();

  private readonly client: MerchantWalletClient;
  private readonly store: IdempotencyStore;
  private readonly settings: WithdrawalSettings;
  private readonly now: () => number;
  private readonly metrics: Pick<GatewayMetrics, 'idempotency'> | undefined;
  private readonly tracer: Tracer | undefined;
  private readonly logger: Pick<Logger, 'warn'> | undefined;

  constructor(
    client: MerchantWalletClient,
    store: IdempotencyStore,
    settings: WithdrawalSettings,
    telemetry: {
      metrics?: Pick<GatewayMetrics, 'idempotency'>;
      tracer?: Tracer;
      logger?: Pick<Logger, 'warn'>;
    } = {},
    now: () => number = Date.now,
  ) {
    this.client = client;
    this.store = store;
    this.settings = settings;
    this.now = now;
    this.metrics = telemetry.metrics;
    this.tracer = telemetry.tracer;
    this.logger = telemetry.logger;
  }

  /**
   * createWithdrawalIntent: checks the input (input.ts), then submits it. Refusals are typed
   * results (WithdrawalUserError) that name the GraphQL input's fields, in the REST API's order:
   * an unknown wallet is named before a bad destination, as the REST API would name it.
   */
  async create(caller: Caller, input: CreateWithdrawalInput): Promise<WithdrawalIntentDTO> {
    const parsed = parseCreateWithdrawalInput(input);
    if (!parsed.ok) {
      // The address was refused here, before the REST API saw the wallet it checks first.
      if (parsed.error.code === 'withdrawal_intent.destination_invalid') {
        await this.requireWallet(caller, String(input.walletId), parsed.walletId);
      }
      throw parsed.error;
    }
    return this.submit(caller, parsed.body, parsed.idempotencyKey);
  }

  /** Sends a checked body once per idempotency key (see the class comment). */
  async submit(
    caller: Caller,
    body: CreateWithdrawalIntentBody,
    key: string | null,
  ): Promise<WithdrawalIntentDTO> {
    if (!key) return this.forgettingReads(caller, this.sendUnkeyed(caller, body));
    const fingerprint = canonicalJson(body);
    const id = `${caller.cacheScope}\u0000${key}`;
    const running = this.inFlight.get(id);
    if (running) {
      if (running.fingerprint !== fingerprint) throw this.reused();
      this.metrics?.idempotency('waited');
      return running.result;
    }
    const result = this.forgettingReads(caller, this.attempt(caller, body, key, fingerprint)).finally(() =>
      this.inFlight.delete(id),
    );
    this.inFlight.set(id, { fingerprint, result });
    return result;
  }

  /**
   * `outcome`, once the caller's cached reads and kept results are forgotten (here and across the
   * fleet) whenever its money moved or may have: after a success, whether the intent was created
   * now, replayed or found by reconciling a lost answer, and after OUTCOME_UNKNOWN. Before the
   * answer leaves, so the caller's next read shows the withdrawal. A definite refusal moved nothing.
   */
  private forgettingReads(
    caller: Caller,
    outcome: Promise<WithdrawalIntentDTO>,
  ): Promise<WithdrawalIntentDTO> {
    return outcome.then(
      async (intent) => {
        await this.client.forgetReads(caller);
        return intent;
      },
      async (error: unknown) => {
        if (isGatewayError(error) && error.code === 'OUTCOME_UNKNOWN') await this.client.forgetReads(caller);
        throw error;
      },
    );
  }

  private async sendUnkeyed(caller: Caller, body: CreateWithdrawalIntentBody): Promise<WithdrawalIntentDTO> {
    const attempt = this.newAttempt(caller, ownerOfUnkeyed(randomUUID()));
    const payout = payoutOf(body);
    await this.guard(() => this.store.putAttempt(payout, attempt)).catch(async (error: unknown) => {
      // Not sent: an attempt written late, or not acknowledged, must not stand as a rival of others.
      if (wasAsked(error)) await this.nowOrLater(() => this.store.removeAttempt(payout, attempt.id));
      throw error;
    });
    const sent = await this.post(caller, body, null, payout, attempt);
    if (!sent.ok) throw sent.error;
    return sent.intent;
  }

  private async attempt(
    caller: Caller,
    body: CreateWithdrawalIntentBody,
    key: string,
    fingerprint: string,
  ): Promise<WithdrawalIntentDTO> {
    const scope = caller.cacheScope;
    const owner = ownerOfKey(scope, key);
    const payout = payoutOf(body);
    // This attempt's name on the key's lease: every write it makes is fenced by it (settle).
    const holder = randomUUID();
    const fresh: PendingRecord = { v: RECORD_FORMAT, state: 'pending', fingerprint, startedAt: this.now() };
    /** The record this attempt last wrote while holding the key. */
    let mine = fresh;
    // The key's outcome is written now, or, while the store does not answer, once it does.
    const settle = (record: IdempotencyRecord | null) => {
      const expected = mine;
      return this.nowOrLater(() => this.store.settle(scope, key, holder, expected, record));
    };
    const leaseMs = this.settings.leaseMs;
    // A claim whose answer was lost (a timeout) may still have been written: freed once the
    // store answers, so a retry need not wait out the lease.
    const claim = () =>
      this.guard(() => this.store.claim(scope, key, fresh, leaseMs, holder)).catch(async (error: unknown) => {
        if (wasAsked(error)) await this.nowOrLater(() => this.store.settle(scope, key, holder, fresh, null));
        throw error;
      });
    let held = await this.traced('withdrawal.idempotency.claim', claim);
    for (let wait = 10; held; wait = Math.min(wait * 2, 200)) {
      const { record, leased } = held;
      // A settled record is answered from the store: only to a key the REST API still accepts.
      if (record.state !== 'pending') await this.requireAcceptedKey(caller);
      if (record.fingerprint !== fingerprint) throw this.reused();
      if (record.state === 'succeeded') {
        this.metrics?.idempotency('replayed');
        return record.intent;
      }
      if (record.state === 'refused') {
        this.metrics?.idempotency('replayed');
        throw replayedUserError(record) ?? new Error(`unknown code ${record.code}`);
      }
      if (leased) {
        if (wait === 10) this.metrics?.idempotency('waited');
        // Another attempt (in another process) may be sending right now: wait for its outcome.
        if (caller.deadline !== undefined && Date.now() + wait >= caller.deadline) {
          throw outcomeStillUnknown(key, 'IN_PROGRESS', [], leaseMs);
        }
        await sleep(wait);
        held = await this.guard(() => this.store.read(scope, key));
        if (!held) held = await claim();
        continue;
      }
      // A pending record nobody holds: an earlier attempt ended without an answer, or its process
      // died. Take the key over (only one attempt can), then find what it may have created.
      const next: PendingRecord = { ...record };
      const taken = await this.guard(() =>
        this.store.takeOver(scope, key, record, next, leaseMs, holder),
      ).catch(async (error: unknown) => {
        // A takeover Redis may still run holds the key for a lease: give the lease up, and keep
        // the record (its attempt's outcome is unknown) as it was.
        if (wasAsked(error)) await this.nowOrLater(() => this.store.settle(scope, key, holder, next, next));
        throw error;
      });
      if (!taken) {
        held = await this.guard(() => this.store.read(scope, key));
        continue;
      }
      mine = next;
      const earlier = record.attempt;
      // Claimed, but nothing was ever sent for it (its process died first): send now.
      if (!earlier) break;
      const decision = await this.traced('withdrawal.reconcile', () =>
        this.reconcile(caller, body, payout, earlier),
      ).catch(async (error: unknown) => {
        await settle(next);
        throw error;
      });
      if (decision.kind === 'found') {
        const other = await this.guard(() => this.store.claimIntent(decision.intent.id, owner)).catch(
          async (error: unknown) => {
            await settle(next);
            throw error;
          },
        );
        if (other === null) {
          this.metrics?.idempotency('reconciled_found');
          await settle(succeeded(next, decision.intent));
          await this.store.removeAttempt(payout, earlier.id).catch(() => {});
          return decision.intent;
        }
      }
      if (decision.kind === 'none') {
        this.metrics?.idempotency('reconciled_not_found');
        await this.store.removeAttempt(payout, earlier.id).catch(() => {});
        break;
      }
      // Ambiguous, or the one candidate was claimed by someone else meanwhile: send nothing.
      this.metrics?.idempotency('reconciled_ambiguous');
      await settle(next);
      if (decision.kind === 'found') {
        throw outcomeStillUnknown(
          key,
          'COMPETING_ATTEMPT',
          [globalIdOf('WithdrawalIntent', decision.intent.id)],
          null,
        );
      }
      throw outcomeStillUnknown(
        key,
        decision.reason,
        decision.candidates.map((candidate) => globalIdOf('WithdrawalIntent', candidate)),
        decision.retryAfterMs,
      );
    }
    // This attempt holds the key and nothing of it is in flight: record the POST, then send it.
    const attempt = this.newAttempt(caller, owner);
    const sending: PendingRecord = {
      v: RECORD_FORMAT,
      state: 'pending',
      fingerprint,
      startedAt: mine.startedAt,
      attempt,
    };
    try {
      // Still the holder (not paused past the lease and overtaken)? Only then may it send.
      if (!(await this.guard(() => this.store.update(scope, key, sending, holder)))) {
        throw outcomeStillUnknown(key, 'IN_PROGRESS', [], leaseMs);
      }
      mine = sending;
      await this.guard(() => this.store.putAttempt(payout, attempt));
    } catch (error) {
      // Nothing was sent: free the key and the attempt, now or once the store answers again.
      const expected = mine;
      await this.nowOrLater(async () => {
        await this.store.settle(scope, key, holder, expected, null);
        await this.store.removeAttempt(payout, attempt.id);
      });
      throw error;
    }
    const sent = await this.post(caller, body, key, payout, attempt);
    if (sent.ok) {
      await settle(succeeded(sending, sent.intent));
      return sent.intent;
    }
    const { error } = sent;
    if (sent.outcome === 'refused') {
      const refusal = error as WithdrawalUserError;
      await settle({
        v: RECORD_FORMAT,
        state: 'refused',
        fingerprint,
        startedAt: sending.startedAt,
        code: refusal.code,
        message: refusal.message,
        ...refusalDetails(refusal),
      });
    } else if (sent.outcome === 'definite') {
      // Nothing was created and the refusal is not the key's to keep (a 401 says nothing about
      // the withdrawal): a retry asks the REST API again, and an unauthenticated flood leaves nothing.
      this.metrics?.idempotency('cleared');
      await settle(null);
    } else {
      // The key stays pending, unleased, with its attempt, ended: the next retry reconciles.
      await settle({ ...sending, attempt: sent.ended });
    }
    throw error;
  }

  /**
   * Sends one POST that is registered as `attempt` of `payout`, and settles the registration by
   * its outcome: a created intent is claimed for the attempt's owner before it is returned, a
   * definite failure removes the attempt, an unknown outcome leaves it for reconcilers, `ended`.
   */
  private async post(
    caller: Caller,
    body: CreateWithdrawalIntentBody,
    key: string | null,
    payout: string,
    attempt: Attempt,
  ): Promise<
    | { ok: true; intent: WithdrawalIntentDTO }
    | { ok: false; error: unknown; outcome: Outcome; ended: Attempt }
  > {
    let intent: WithdrawalIntentDTO;
    try {
      intent = await this.send(caller, body, key);
    } catch (error) {
      const outcome = outcomeOf(error);
      const ended = { ...attempt, endedAt: this.now() };
      if (outcome === 'unknown') await this.nowOrLater(() => this.store.putAttempt(payout, ended));
      else await this.nowOrLater(() => this.store.removeAttempt(payout, attempt.id));
      return { ok: false, error, outcome, ended };
    }
    // The intent exists: it is answered whatever the store says. When the claim cannot be written,
    // the attempt stays registered (in flight, then past its end), so no reconciler can take the
    // intent as its own: it sees a rival and answers ambiguous instead.
    const claimed = async () => {
      const other = await this.store.claimIntent(intent.id, attempt.owner);
      if (other === null) await this.store.removeAttempt(payout, attempt.id);
      else this.metrics?.idempotency('claim_conflict');
    };
    await this.nowOrLater(claimed);
    return { ok: true, intent };
  }

  /**
   * A write to the store that must happen, though not before the answer: tried now, and, while
   * the store does not answer (or answered too late to be seen), again in the background with a
   * backoff from 1 s to 30 s, for as long as the store keeps its records (24 h). Each such write
   * is fenced or idempotent, so a late or repeated one changes nothing it should not. Used for
   * the outcome of a sent POST (a replay then finds it at once rather than reconciling), and to
   * free what an attempt that sent nothing may still have written (Redis runs a command the
   * gateway stopped waiting for when it resumes).
   */
  private async nowOrLater(write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
      return;
    } catch {}
    const giveUpAt = Date.now() + IDEMPOTENCY_TTL_MS;
    const retry = async () => {
      for (let wait = 1_000; Date.now() + wait < giveUpAt; wait = Math.min(wait * 2, 30_000)) {
        await sleep(wait, undefined, { ref: false });
        try {
          await write();
          return;
        } catch {}
      }
    };
    void retry();
  }

  /** A POST about to leave: sent now, waited for until the request's deadline at the latest. */
  private newAttempt(caller: Caller, owner: string): Attempt {
    const sentAt = this.now();
    return {
      v: RECORD_FORMAT,
      id: randomUUID(),
      owner,
      sentAt,
      endsBy: Math.min(caller.deadline ?? Number.POSITIVE_INFINITY, sentAt + this.settings.leaseMs),
      endedAt: null,
    };
  }

  /**
   * Decides what `attempt` created (reconcile.ts), reading the caller's intents once its window
   * has closed, waiting for that when the request's deadline allows. The list is read before the
   * attempts and claims: an intent seen in the list was registered by its attempt before it
   * existed, so that attempt, or its claim, is seen too.
   */
  private async reconcile(
    caller: Caller,
    body: CreateWithdrawalIntentBody,
    payout: string,
    attempt: Attempt,
  ): Promise<Decision> {
    const settings = this.settings.reconcile;
    const window = windowOf(attempt, settings);
    const wait = window.closesAt - this.now();
    if (wait > 0) {
      if (caller.deadline !== undefined && Date.now() + wait + READ_RESERVE_MS > caller.deadline) {
        return { kind: 'ambiguous', reason: 'WINDOW_OPEN', candidates: [], retryAfterMs: wait };
      }
      await sleep(wait);
    }
    let read: Awaited<ReturnType<typeof readWindow>>;
    try {
      read = await readWindow(this.client, caller, window, settings.pageSize, MAX_PAGES);
    } catch (error) {
      // A refused key is the caller's answer; anything else only means the list was not read.
      if (isGatewayError(error) && (error.code === 'UNAUTHENTICATED' || error.code === 'FORBIDDEN')) {
        throw error;
      }
      return { kind: 'ambiguous', reason: 'WINDOW_UNREAD', candidates: [], retryAfterMs: null };
    }
    if (!read.complete) {
      return { kind: 'ambiguous', reason: 'WINDOW_UNREAD', candidates: [], retryAfterMs: null };
    }
    const matching = read.items.filter((intent) => matchesBody(intent, body));
    const owners = await this.guard(() => this.store.intentOwners(matching.map((intent) => intent.id)));
    const others = await this.guard(() => this.store.attempts(payout));
    const since = await this.guard(() => this.store.registrySince());
    return decide(attempt, body, matching, owners, others, settings, this.now(), since);
  }

  /**
   * Before a key's kept outcome is replayed (or its key called reused): one fresh GET, even for a
   * key the REST API accepted a moment ago (MerchantWalletClient.proveKeyNow; none for a key
   * refused within its TTL), so a key revoked since is answered UNAUTHENTICATED, never its earlier
   * withdrawal. With no answer either way (a 403, a 5xx, a timeout) the outcome is replayed:
   * refusing it would tell a retrying client nothing about an intent that exists.
   */
  private async requireAcceptedKey(caller: Caller): Promise<void> {
    const proof = await this.client.proveKeyNow(caller);
    if (proof.kind === 'refused') throw proof.error;
  }

  /** `work` inside a span of its own, when tracing is on. */
  private traced<T>(name: string, work: () => Promise<T>): Promise<T> {
    if (!this.tracer) return work();
    return this.tracer.startActiveSpan(name, async (span) => {
      try {
        return await work();
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.name ?? 'error' });
        throw error;
      } finally {
        span.end();
      }
    });
  }

  private reused(): WithdrawalUserError {
    this.metrics?.idempotency('key_reused');
    return reused();
  }

  /**
   * A store call that decides whether the POST may be sent. When the store cannot answer, the
   * withdrawal is refused before anything is sent: never sent unprotected.
   */
  private async guard<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof StoreFullError) {
        this.metrics?.idempotency('refused_full');
        throw new GatewayError(
          'IDEMPOTENCY_UNAVAILABLE',
          `The withdrawal was not sent: ${error.message} (24 h each). Retry later, or without an idempotencyKey.`,
          { cause: error, extensions: { sent: false, reason: 'STORE_FULL' } },
        );
      }
      if (error instanceof UnknownRecordFormatError) {
        // A newer release's record, met during a rolling deploy: guessing at it could send twice.
        this.metrics?.idempotency('refused_format');
        this.logger?.warn(
          { err: error.message },
          'withdrawal refused unsent: a record this release cannot read',
        );
        throw new GatewayError(
          'IDEMPOTENCY_UNAVAILABLE',
          error.newer
            ? `The withdrawal was not sent: ${error.message}. Retry with the same idempotencyKey: a replica of the newer release will answer it.`
            : `The withdrawal was not sent: ${error.message}. This idempotencyKey stays refused until its record expires (24 h); check withdrawalIntents before sending the payout under a new key.`,
          { cause: error, extensions: { sent: false, reason: 'RECORD_FORMAT_UNKNOWN' } },
        );
      }
      if (error instanceof ReplicaAckError) {
        this.metrics?.idempotency('refused_unacknowledged');
        throw new GatewayError(
          'IDEMPOTENCY_UNAVAILABLE',
          'The withdrawal was not sent: the record that guards it against a duplicate could not be copied to a Redis replica in time. Retry with the same idempotencyKey.',
          { cause: error, extensions: { sent: false, reason: 'REPLICA_UNACKNOWLEDGED' } },
        );
      }
      this.metrics?.idempotency('refused_unavailable');
      throw new GatewayError(
        'IDEMPOTENCY_UNAVAILABLE',
        'The withdrawal was not sent: the record that guards it against a duplicate cannot be written right now. Retry with the same idempotencyKey.',
        { cause: error, extensions: { sent: false, reason: 'STORE_UNAVAILABLE' } },
      );
    }
  }

  /** One POST; REST business errors become typed results. */
  private async send(
    caller: Caller,
    body: CreateWithdrawalIntentBody,
    key: string | null,
  ): Promise<WithdrawalIntentDTO> {
    try {
      return await this.client.createWithdrawalIntent(caller, body, key);
    } catch (error) {
      if (!isGatewayError(error)) throw error;
      const typed = toWithdrawalUserError(error);
      // Every field but the wallet passed input.ts: a data_invalid that names no input field is
      // the REST API refusing the wallet (its message speaks of `senderWalletId`). Say it in the
      // input's own terms when the wallet is indeed not the caller's.
      if (typed instanceof DataInvalidError && typed.field === null) {
        await this.requireWallet(caller, body.senderWalletId, body.senderWalletId);
      }
      throw typed ?? error;
    }
  }

  /**
   * Throws DataInvalidError naming `input.walletId` when `walletId` is not one of the caller's
   * wallets. One GET by id, on refusal paths only (through the micro-cache).
   */
  private async requireWallet(caller: Caller, given: string, walletId: string | null): Promise<void> {
    if (walletId !== null && (await this.client.getWallet(caller, walletId))) return;
    throw new DataInvalidError(
      `input.walletId must be the id of one of your wallets; received "${given.slice(0, 128)}"`,
      ['input', 'walletId'],
    );
  }
}

function reused(): WithdrawalUserError {
  return userError('idempotency_key_reused', 'This idempotencyKey was already used with a different input.');
}

/** Whether a refused store call may have reached the store (and written something). */
function wasAsked(error: unknown): boolean {
  const cause = error instanceof GatewayError ? error.cause : error;
  return !(cause instanceof NotAskedError || cause instanceof StoreFullError);
}

/** A record of the intent `pending`'s key created. */
function succeeded(pending: PendingRecord, intent: WithdrawalIntentDTO): IdempotencyRecord {
  return {
    v: RECORD_FORMAT,
    state: 'succeeded',
    fingerprint: pending.fingerprint,
    startedAt: pending.startedAt,
    intent,
  };
}

/** What an error of the POST (WithdrawalService.send) says happened upstream. */
function outcomeOf(error: unknown): Outcome {
  if (error instanceof WithdrawalUserError) return 'refused';
  if (isGatewayError(error)) {
    if (error.code === 'OUTCOME_UNKNOWN') return 'unknown';
    if (error.extensions.sent === false) return 'definite';
    const status = error.upstream?.status;
    if (status !== undefined && status >= 400 && status < 500) return 'definite';
  }
  // Anything else, a bug included, may have followed a POST that reached the REST API.
  return 'unknown';
}
