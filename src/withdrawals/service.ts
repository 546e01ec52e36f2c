import { isGatewayError } from '../errors.ts';
import { canonicalJson } from '../shared/canonical-json.ts';
import type { Caller } from '../upstream/caller.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';
import type { CreateWithdrawalIntentBody, WithdrawalIntentDTO } from '../upstream/types.ts';
import type { IdempotencyStore } from './idempotency-store.ts';
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
  private readonly now: () => number;

  constructor(client: MerchantWalletClient, store: IdempotencyStore, now: () => number = Date.now) {
    this.client = client;
    this.store = store;
    this.now = now;
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
      if (running.fingerprint !== fingerprint) throw reused();
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
    const startedAt = this.now();
    const existing = await this.store.claim(scope, key, { state: 'pending', fingerprint, startedAt });
    let attemptStartedAt = startedAt;
    if (existing) {
      if (existing.fingerprint !== fingerprint) throw reused();
      if (existing.state === 'succeeded') return existing.intent;
      if (existing.state === 'refused') {
        throw (
          withdrawalUserError(existing.code, existing.message) ?? new Error(`unknown code ${existing.code}`)
        );
      }
      // An earlier attempt may have created the intent without us hearing back.
      const found = await this.reconcile(caller, body, existing.startedAt);
      if (found) {
        await this.store.save(scope, key, {
          state: 'succeeded',
          fingerprint,
          startedAt: existing.startedAt,
          intent: found,
        });
        return found;
      }
      attemptStartedAt = existing.startedAt;
    }
    try {
      const intent = await this.send(caller, body, key);
      await this.store.save(scope, key, {
        state: 'succeeded',
        fingerprint,
        startedAt: attemptStartedAt,
        intent,
      });
      return intent;
    } catch (error) {
      if (error instanceof WithdrawalUserError) {
        await this.store.save(scope, key, {
          state: 'refused',
          fingerprint,
          startedAt: attemptStartedAt,
          code: error.code,
          message: error.message,
        });
      }
      // Anything else (OUTCOME_UNKNOWN above all) leaves the key pending: the next attempt reconciles.
      throw error;
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
