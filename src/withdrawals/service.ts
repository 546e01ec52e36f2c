import { setTimeout as sleep } from 'node:timers/promises';
import { SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { GatewayError, isGatewayError, outcomeUnknown } from '../errors.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import { canonicalJson } from '../shared/canonical-json.ts';
import type { Caller } from '../upstream/caller.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';
import type { CreateWithdrawalIntentBody, WithdrawalIntentDTO } from '../upstream/types.ts';
import type { IdempotencyRecord, IdempotencyStore, PendingRecord } from './idempotency-store.ts';
import { type CreateWithdrawalInput, parseCreateWithdrawalInput } from './input.ts';
import {
  DataInvalidError,
  toWithdrawalUserError,
  userError,
  WithdrawalUserError,
  withdrawalUserError,
} from './user-errors.ts';

/** How far the REST API's clock may be behind ours when matching an intent to an attempt. */
const CLOCK_SKEW_MS = 5 * 60 * 1000;
/** How many of the merchant's latest intents reconciliation looks through. */
const RECONCILE_WINDOW = 100;

/**
 * Creating a withdrawal so that it can never happen twice for one idempotency key:
 *
 * - concurrent attempts with the same key in this process join the first one;
 * - the first result (the intent, or a business refusal) is kept for 24 h and replayed; the same
 *   key with a different input is IdempotencyKeyReusedError;
 * - an attempt whose outcome is unknown (OUTCOME_UNKNOWN) leaves the key pending. A replay first
 *   reconciles: it looks through the merchant's latest intents for one the first attempt created
 *   (same wallet, amount, fee mode and destination, created after the attempt began, not handed
 *   out for another key) and returns it instead of creating a second. Only when there is none does
 *   it send the POST again, with the same Idempotency-Key header.
 *
 * Without a key, the POST is sent once and never retried; there is nothing to reconcile against.
 */
export class WithdrawalService {
  private readonly inFlight = new Map<
    string,
    { fingerprint: string; result: Promise<WithdrawalIntentDTO> }
  >();

  private readonly client: MerchantWalletClient;
  private readonly store: IdempotencyStore;
  private readonly leaseMs: number;
  private readonly now: () => number;
  private readonly metrics: Pick<GatewayMetrics, 'idempotency'> | undefined;
  private readonly tracer: Tracer | undefined;

  /** `leaseMs` must outlive any POST: longer than the request deadline (config.ts checks it). */
  constructor(
    client: MerchantWalletClient,
    store: IdempotencyStore,
    leaseMs: number,
    telemetry: { metrics?: Pick<GatewayMetrics, 'idempotency'>; tracer?: Tracer } = {},
    now: () => number = Date.now,
  ) {
    this.client = client;
    this.store = store;
    this.leaseMs = leaseMs;
    this.now = now;
    this.metrics = telemetry.metrics;
    this.tracer = telemetry.tracer;
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
    if (!key) return this.send(caller, body, null);
    const fingerprint = canonicalJson(body);
    const id = `${caller.cacheScope}\u0000${key}`;
    const running = this.inFlight.get(id);
    if (running) {
      if (running.fingerprint !== fingerprint) throw this.reused();
      this.metrics?.idempotency('waited');
      return running.result;
    }
    const result = this.attempt(caller, body, key, fingerprint).finally(() => this.inFlight.delete(id));
    this.inFlight.set(id, { fingerprint, result });
    return result;
  }

  private async attempt(
    caller: Caller,
    body: CreateWithdrawalIntentBody,
    key: string,
    fingerprint: string,
  ): Promise<WithdrawalIntentDTO> {
    const scope = caller.cacheScope;
    const mine: PendingRecord = { state: 'pending', fingerprint, startedAt: this.now() };
    let attemptStartedAt = mine.startedAt;
    let held = await this.traced('withdrawal.idempotency.claim', () =>
      this.guard(() => this.store.claim(scope, key, mine, this.leaseMs)),
    );
    for (let wait = 10; held; wait = Math.min(wait * 2, 200)) {
      const { record, leased } = held;
      if (record.fingerprint !== fingerprint) throw this.reused();
      if (record.state === 'succeeded') {
        this.metrics?.idempotency('replayed');
        return record.intent;
      }
      if (record.state === 'refused') {
        this.metrics?.idempotency('replayed');
        throw withdrawalUserError(record.code, record.message) ?? new Error(`unknown code ${record.code}`);
      }
      if (leased) {
        if (wait === 10) this.metrics?.idempotency('waited');
        // Another attempt (in another process) may be sending right now: wait for its outcome.
        if (caller.deadline !== undefined && Date.now() + wait >= caller.deadline) throw stillInProgress(key);
        await sleep(wait);
        held = await this.guard(() => this.store.read(scope, key));
        if (!held) held = await this.guard(() => this.store.claim(scope, key, mine, this.leaseMs));
        continue;
      }
      // A pending record nobody holds: an earlier attempt ended without an answer, or its process
      // died. Take the key over (only one attempt can), then find what it may have created.
      const next: PendingRecord = { ...mine, startedAt: record.startedAt };
      if (!(await this.guard(() => this.store.takeOver(scope, key, record, next, this.leaseMs)))) {
        held = await this.guard(() => this.store.read(scope, key));
        continue;
      }
      const found = await this.traced('withdrawal.reconcile', () =>
        this.reconcile(caller, body, record.startedAt),
      ).catch(async (error: unknown) => {
        await this.release(scope, key, next);
        throw error;
      });
      this.metrics?.idempotency(found ? 'reconciled_found' : 'reconciled_not_found');
      if (found) {
        await this.keep(scope, key, {
          state: 'succeeded',
          fingerprint,
          startedAt: record.startedAt,
          intent: found,
        });
        return found;
      }
      attemptStartedAt = record.startedAt;
      break;
    }
    try {
      const intent = await this.send(caller, body, key);
      await this.keep(scope, key, { state: 'succeeded', fingerprint, startedAt: attemptStartedAt, intent });
      return intent;
    } catch (error) {
      if (error instanceof WithdrawalUserError) {
        await this.keep(scope, key, {
          state: 'refused',
          fingerprint,
          startedAt: attemptStartedAt,
          code: error.code,
          message: error.message,
        });
      } else {
        // OUTCOME_UNKNOWN above all: the key stays pending, unleased, so the next attempt
        // reconciles at once instead of waiting for the lease to run out.
        await this.release(scope, key, { state: 'pending', fingerprint, startedAt: attemptStartedAt });
      }
      throw error;
    }
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
   * Saves an outcome that already happened. When the store fails now, the client still gets the
   * outcome: the key stays pending under a lease that runs out, and a replay reconciles.
   */
  private async keep(scope: string, key: string, record: IdempotencyRecord): Promise<void> {
    await this.store.save(scope, key, record).catch(() => {});
  }

  /** Gives the lease up and keeps the key pending; a store failure here only delays the next attempt. */
  private async release(scope: string, key: string, record: PendingRecord): Promise<void> {
    await this.keep(scope, key, record);
  }

  /**
   * A store call that decides whether the POST may be sent. When the store cannot answer, the
   * withdrawal is refused before anything is sent: never sent unprotected.
   */
  private async guard<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw new GatewayError(
        'IDEMPOTENCY_UNAVAILABLE',
        'The withdrawal was not sent: its idempotencyKey cannot be checked right now. Retry with the same idempotencyKey.',
        { cause: error, extensions: { sent: false } },
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

  private async reconcile(
    caller: Caller,
    body: CreateWithdrawalIntentBody,
    startedAt: number,
  ): Promise<WithdrawalIntentDTO | null> {
    const page = await this.client.listWithdrawalIntents(
      caller,
      { page: 1, size: RECONCILE_WINDOW },
      { fresh: true },
    );
    const amount = normalizeDecimal(body.amount);
    // Oldest first: if several match, the first attempt's intent is the earliest.
    const candidates = page.items
      .filter(
        (intent) =>
          intent.wallet.id === body.senderWalletId &&
          normalizeDecimal(intent.amount) === amount &&
          intent.serviceFeeMode === body.serviceFeeMode &&
          intent.destination.identifier === body.destination.identifier &&
          Date.parse(intent.createdAt) >= startedAt - CLOCK_SKEW_MS,
      )
      .reverse();
    for (const intent of candidates) {
      if (!(await this.store.isClaimedIntent(caller.cacheScope, intent.id))) return intent;
    }
    return null;
  }
}

function stillInProgress(key: string): GatewayError {
  return outcomeUnknown(key, null);
}

function reused(): WithdrawalUserError {
  return userError('idempotency_key_reused', 'This idempotencyKey was already used with a different input.');
}

/** "10.50" and "10.5000000000000000" are the same amount. */
function normalizeDecimal(value: string): string {
  const [whole = '0', fraction = ''] = value.split('.');
  const trimmed = fraction.replace(/0+$/, '');
  const integer = whole.replace(/^0+(?=\d)/, '');
  return trimmed ? `${integer}.${trimmed}` : integer;
}
