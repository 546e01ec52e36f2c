import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { SpanStatusCode, type Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { isGatewayError, outcomeStillUnknown } from '../errors/errors.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import { globalIdOf } from '../schema/global-ids.ts';
import { canonicalJson } from '../shared/canonical-json.ts';
import type { Caller } from '../upstream/caller.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';
import type { CreateWithdrawalIntentBody, WithdrawalIntentDTO } from '../upstream/types.ts';
import {
  type IdempotencyRecord,
  type IdempotencyStore,
  ownerOfKey,
  ownerOfUnkeyed,
  type PendingRecord,
  type Submission,
} from './idempotency-store.ts';
import { type CreateWithdrawalInput, parseCreateWithdrawalInput } from './input.ts';
import { KeyLease } from './key-lease.ts';
import { payoutOf, type ReconcileReads, type ReconcileSettings, reconcileSubmission } from './reconcile.ts';
import { RECORD_FORMAT } from './record-format.ts';
import { newSubmission, requireWallet, type SendDeps, sendSubmission } from './send-submission.ts';
import { guardStore, nowOrLater, type StoreGuard, wasAsked } from './store-calls.ts';
import { refusalDetails, replayedUserError, userError, type WithdrawalUserError } from './user-errors.ts';

export interface WithdrawalSettings {
  /** How long a request holds its key (IDEMPOTENCY_LEASE_MS); must outlive any POST (config.ts checks it). */
  leaseMs: number;
  /** The windows of reconciliation (reconcile.ts). */
  reconcile: ReconcileSettings;
}

/** How taking a key ended (WithdrawalService.takeKey), when it did not throw. */
type TakenKey =
  /** The key's kept success, replayed. */
  | { kind: 'replayed'; intent: WithdrawalIntentDTO }
  /** The key is held; `earlier` is the POST of an earlier request whose outcome is unknown. */
  | { kind: 'held'; lease: KeyLease; earlier: Submission | undefined };

/**
 * Creating a withdrawal at most once per idempotency key, against a REST API that does not
 * deduplicate, with other keys, unkeyed requests and other replicas acting at the same time
 * (the guarantee, as invariants, is in the docs' Withdrawals page). A keyed request takes the key,
 * resolves an earlier request's POST, then sends (submitKeyed):
 *
 * - take the key (takeKey): concurrent requests with the same key in this process join the first
 *   one (submit, before any step); across processes the key's lease (KeyLease) lets one request send at a time, and every
 *   write a request makes to its key is fenced by its lease (a holder paused past it changes
 *   nothing). A success or a business refusal is kept for 24 h and replayed; the same key with a
 *   different input is IdempotencyKeyReusedError;
 * - resolve an earlier request (resolveEarlier): an unknown outcome (OUTCOME_UNKNOWN) left the key
 *   pending with its submission. A retry reconciles (reconcile.ts): it returns the one intent the
 *   submission can have created, sends again when a fully read, closed window holds none, and
 *   otherwise sends nothing and answers OUTCOME_UNKNOWN with a reason, keeping the key blocked;
 * - send (sendHeld): every POST, keyed or not, is registered as a submission of its payout before
 *   it is sent, and every intent handed to a caller is claimed for it before the answer leaves
 *   (send-submission.ts). A definite failure (401, 403, another 4xx, not sent) creates nothing
 *   and leaves nothing: the key is forgotten, and a retry asks the REST API again.
 *
 * Without a key the POST is sent once and never retried; its submission and intent are registered
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
  private readonly guard: StoreGuard;
  private readonly sendDeps: SendDeps;
  private readonly reconcileReads: ReconcileReads;

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
    this.guard = guardStore(telemetry.metrics, telemetry.logger);
    this.sendDeps = { client, store, now, metrics: telemetry.metrics };
    this.reconcileReads = { client, store, guard: this.guard, settings: settings.reconcile, now };
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
        await requireWallet(this.client, caller, String(input.walletId), parsed.walletId);
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
    if (!key) return this.forgettingReads(caller, this.submitUnkeyed(caller, body));
    const fingerprint = canonicalJson(body);
    const id = `${caller.scope}\u0000${key}`;
    const running = this.inFlight.get(id);
    if (running) {
      if (running.fingerprint !== fingerprint) throw this.reused();
      this.metrics?.idempotency('waited');
      return running.result;
    }
    const result = this.forgettingReads(caller, this.submitKeyed(caller, body, key, fingerprint)).finally(
      () => this.inFlight.delete(id),
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
        await this.client.invalidate(caller);
        return intent;
      },
      async (error: unknown) => {
        if (isGatewayError(error) && error.code === 'OUTCOME_UNKNOWN') await this.client.invalidate(caller);
        throw error;
      },
    );
  }

  private async submitUnkeyed(
    caller: Caller,
    body: CreateWithdrawalIntentBody,
  ): Promise<WithdrawalIntentDTO> {
    const submission = newSubmission(caller, ownerOfUnkeyed(randomUUID()), this.settings.leaseMs, this.now());
    const payout = payoutOf(body);
    await this.guard(() => this.store.putSubmission(payout, submission)).catch(async (error: unknown) => {
      // Not sent: a submission written late, or not acknowledged, must not stand as a rival of others.
      if (wasAsked(error)) await nowOrLater(() => this.store.removeSubmission(payout, submission.id));
      throw error;
    });
    const sent = await sendSubmission(this.sendDeps, caller, body, null, payout, submission);
    if (sent.kind === 'created') return sent.intent;
    throw sent.kind === 'refusal_kept' ? sent.refusal : sent.error;
  }

  /** A keyed request: take the key, resolve an earlier request's POST, send (see the class comment). */
  private async submitKeyed(
    caller: Caller,
    body: CreateWithdrawalIntentBody,
    key: string,
    fingerprint: string,
  ): Promise<WithdrawalIntentDTO> {
    const taken = await this.takeKey(caller, key, fingerprint);
    if (taken.kind === 'replayed') return taken.intent;
    if (taken.earlier) {
      const found = await this.resolveEarlier(caller, body, key, taken.lease, taken.earlier);
      if (found) return found;
    }
    return this.sendHeld(caller, body, key, taken.lease);
  }

  /**
   * Takes the key: claims it when nobody has, waits while another request holds its lease, replays
   * a kept outcome, or takes over a pending key nobody holds (its request ended without an answer,
   * or its process died). Throws a kept refusal, IdempotencyKeyReusedError, UNAUTHENTICATED (a
   * key revoked since, requireAcceptedKey), IDEMPOTENCY_UNAVAILABLE (the store, guardStore), or
   * OUTCOME_UNKNOWN (IN_PROGRESS) when the deadline comes before the other request's outcome.
   */
  private async takeKey(caller: Caller, key: string, fingerprint: string): Promise<TakenKey> {
    const fresh: PendingRecord = { v: RECORD_FORMAT, state: 'pending', fingerprint, startedAt: this.now() };
    const { leaseMs } = this.settings;
    const lease = new KeyLease(this.store, this.guard, leaseMs, caller.scope, key, fresh);
    let held = await this.traced('withdrawal.idempotency.claim', () => lease.claim());
    /** A request counts once in the `waited` metric, however often it polls a key another holds. */
    let waited = false;
    for (let wait = 10; held; wait = Math.min(wait * 2, 200)) {
      const { record, leased } = held;
      // A settled record is answered from the store: only to a key the REST API still accepts.
      if (record.state !== 'pending') await this.requireAcceptedKey(caller);
      if (record.fingerprint !== fingerprint) throw this.reused();
      if (record.state === 'succeeded') {
        this.metrics?.idempotency('replayed');
        return { kind: 'replayed', intent: record.intent };
      }
      if (record.state === 'refused') {
        this.metrics?.idempotency('replayed');
        throw replayedUserError(record);
      }
      if (leased) {
        if (!waited) this.metrics?.idempotency('waited');
        waited = true;
        // Another request (in another process) may be sending right now: wait for its outcome.
        if (caller.deadline !== undefined && Date.now() + wait >= caller.deadline) {
          throw outcomeStillUnknown(key, 'IN_PROGRESS', [], leaseMs);
        }
        await sleep(wait);
        held = (await lease.read()) ?? (await lease.claim());
        continue;
      }
      // A pending record nobody holds: take the key over (only one request can).
      if (await lease.takeOver(record)) return { kind: 'held', lease, earlier: record.attempt };
      held = await lease.read();
    }
    return { kind: 'held', lease, earlier: undefined };
  }

  /**
   * Resolves `earlier`, the POST of a request whose outcome is unknown (reconcile.ts): the intent
   * it created, claimed for this key; null when it created none, and this request sends. Otherwise
   * throws OUTCOME_UNKNOWN: nothing is sent and the key stays blocked.
   */
  private async resolveEarlier(
    caller: Caller,
    body: CreateWithdrawalIntentBody,
    key: string,
    lease: KeyLease,
    earlier: Submission,
  ): Promise<WithdrawalIntentDTO | null> {
    const payout = payoutOf(body);
    // On any failure the key keeps its record, with its earlier submission, for the next retry.
    const keep = async (error: unknown): Promise<never> => {
      await lease.settle(lease.record);
      throw error;
    };
    const decision = await this.traced('withdrawal.reconcile', () =>
      reconcileSubmission(this.reconcileReads, caller, body, payout, earlier),
    ).catch(keep);
    if (decision.kind === 'none') {
      this.metrics?.idempotency('reconciled_not_found');
      await this.store.removeSubmission(payout, earlier.id).catch(() => {});
      return null;
    }
    if (decision.kind === 'found') {
      const owner = ownerOfKey(caller.scope, key);
      const other = await this.guard(() => this.store.claimIntent(decision.intent.id, owner)).catch(keep);
      if (other === null) {
        this.metrics?.idempotency('reconciled_found');
        await lease.settle(succeeded(lease.record, decision.intent));
        await this.store.removeSubmission(payout, earlier.id).catch(() => {});
        return decision.intent;
      }
    }
    // Ambiguous, or the one candidate was claimed by someone else meanwhile: send nothing.
    this.metrics?.idempotency('reconciled_ambiguous');
    await lease.settle(lease.record);
    if (decision.kind === 'found') {
      const candidate = globalIdOf('WithdrawalIntent', decision.intent.id);
      throw outcomeStillUnknown(key, 'COMPETING_ATTEMPT', [candidate], null);
    }
    const candidates = decision.candidates.map((candidate) => globalIdOf('WithdrawalIntent', candidate));
    throw outcomeStillUnknown(key, decision.reason, candidates, decision.retryAfterMs);
  }

  /**
   * Sends while holding the key: names the POST in the key's record and registers it with its
   * payout (only while still the holder), sends it, and settles the key by what it did: a success
   * or a business refusal kept, a definite failure forgotten, an unknown outcome left pending with
   * its submission, ended, for the next retry to reconcile.
   */
  private async sendHeld(
    caller: Caller,
    body: CreateWithdrawalIntentBody,
    key: string,
    lease: KeyLease,
  ): Promise<WithdrawalIntentDTO> {
    const payout = payoutOf(body);
    const { leaseMs } = this.settings;
    const submission = newSubmission(caller, ownerOfKey(caller.scope, key), leaseMs, this.now());
    const { fingerprint, startedAt } = lease.record;
    const sending: PendingRecord = {
      v: RECORD_FORMAT,
      state: 'pending',
      fingerprint,
      startedAt,
      attempt: submission,
    };
    try {
      if (!(await lease.update(sending))) throw outcomeStillUnknown(key, 'IN_PROGRESS', [], leaseMs);
      await this.guard(() => this.store.putSubmission(payout, submission));
    } catch (error) {
      // Nothing was sent: free the key and the submission, now or once the store answers again.
      await lease.settle(null, () => this.store.removeSubmission(payout, submission.id));
      throw error;
    }
    const sent = await sendSubmission(this.sendDeps, caller, body, key, payout, submission);
    switch (sent.kind) {
      case 'created':
        await lease.settle(succeeded(sending, sent.intent));
        return sent.intent;
      case 'refusal_kept': {
        const { refusal } = sent;
        const { code, message } = refusal;
        await lease.settle({
          v: RECORD_FORMAT,
          state: 'refused',
          fingerprint,
          startedAt,
          code,
          message,
          ...refusalDetails(refusal),
        });
        throw refusal;
      }
      case 'forgotten':
        // The refusal is not the key's to keep (a 401 says nothing about the withdrawal): a retry
        // asks the REST API again, and an unauthenticated flood leaves nothing.
        this.metrics?.idempotency('cleared');
        await lease.settle(null);
        throw sent.error;
      case 'unknown':
        await lease.settle({ ...sending, attempt: sent.ended });
        throw sent.error;
    }
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
    return userError(
      'idempotency_key_reused',
      'This idempotencyKey was already used with a different input.',
    );
  }
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
