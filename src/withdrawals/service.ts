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
 * createWithdrawalIntent at most once per idempotency key, against a REST API that does not
 * deduplicate: the guarantee (I1–I5) and rules R1–R11 of docs/withdrawals.md. A keyed request
 * takes the key (takeKey: R1, R4, R5), resolves an earlier request's unknown outcome
 * (resolveEarlier: R7), then sends (sendHeld: R2, R3, R6); an unkeyed one is registered and sent
 * once (R2).
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
   * Checks the input (input.ts), then submits it. Refusals are WithdrawalUserErrors naming the
   * GraphQL input's fields in the REST API's order (an unknown wallet before a bad destination).
   */
  async create(caller: Caller, input: CreateWithdrawalInput): Promise<WithdrawalIntentDTO> {
    const parsed = parseCreateWithdrawalInput(input);
    if (!parsed.ok) {
      if (parsed.error.code === 'withdrawal_intent.destination_invalid') {
        await requireWallet(this.client, caller, String(input.walletId), parsed.walletId);
      }
      throw parsed.error;
    }
    return this.submit(caller, parsed.body, parsed.idempotencyKey);
  }

  /** Sends a checked body once per idempotency key; requests of a key under way join it (R1). */
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

  /** `outcome`, once the caller's reads are forgotten after a success or OUTCOME_UNKNOWN (R9). */
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
      if (wasAsked(error)) await nowOrLater(() => this.store.removeSubmission(payout, submission.id));
      throw error;
    });
    const sent = await sendSubmission(this.sendDeps, caller, body, null, payout, submission);
    if (sent.kind === 'created') return sent.intent;
    throw sent.kind === 'refusal_kept' ? sent.refusal : sent.error;
  }

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
   * Claims the key, waits while another request holds it, replays a kept outcome, or takes over a
   * pending key nobody holds (R1, R4, R5). Throws a kept refusal, IdempotencyKeyReusedError,
   * UNAUTHENTICATED (a key revoked since), IDEMPOTENCY_UNAVAILABLE (the store), or OUTCOME_UNKNOWN
   * (IN_PROGRESS) when the deadline comes before the other request's outcome.
   */
  private async takeKey(caller: Caller, key: string, fingerprint: string): Promise<TakenKey> {
    const fresh: PendingRecord = { v: RECORD_FORMAT, state: 'pending', fingerprint, startedAt: this.now() };
    const { leaseMs } = this.settings;
    const lease = new KeyLease(this.store, this.guard, leaseMs, caller.scope, key, fresh);
    let held = await this.traced('withdrawal.idempotency.claim', () => lease.claim());
    let waited = false;
    for (let wait = 10; held; wait = Math.min(wait * 2, 200)) {
      const { record, leased } = held;
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
        if (caller.deadline !== undefined && Date.now() + wait >= caller.deadline) {
          throw outcomeStillUnknown(key, 'IN_PROGRESS', [], leaseMs);
        }
        await sleep(wait);
        held = (await lease.read()) ?? (await lease.claim());
        continue;
      }
      if (await lease.takeOver(record)) return { kind: 'held', lease, earlier: record.attempt };
      held = await lease.read();
    }
    return { kind: 'held', lease, earlier: undefined };
  }

  /**
   * Reconciles `earlier`, a POST whose outcome is unknown (R7): the intent it created, claimed for
   * this key; null when it created none. Otherwise throws OUTCOME_UNKNOWN, the key kept blocked.
   */
  private async resolveEarlier(
    caller: Caller,
    body: CreateWithdrawalIntentBody,
    key: string,
    lease: KeyLease,
    earlier: Submission,
  ): Promise<WithdrawalIntentDTO | null> {
    const payout = payoutOf(body);
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
   * Names the POST in the key's record and registers it (R2), sends it, and settles the key by the
   * SentOutcome: kept (R4), forgotten (R6), or left pending with its ended submission (R7).
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
        this.metrics?.idempotency('cleared');
        await lease.settle(null);
        throw sent.error;
      case 'unknown':
        await lease.settle({ ...sending, attempt: sent.ended });
        throw sent.error;
    }
  }

  /** Throws UNAUTHENTICATED when a fresh GET finds the key refused; any other answer passes (R5). */
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
