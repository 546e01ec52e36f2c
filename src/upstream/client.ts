import { performance } from 'node:perf_hooks';
import { GatewayError, outcomeUnknown } from '../errors/errors.ts';
import { ResponseCache } from './cache.ts';
import type { UpstreamResponse, UpstreamTelemetry } from './call.ts';
import type { Caller } from './caller.ts';
import { CallerScopes } from './caller-scope.ts';
import { type Decoder, decodeOne, decodePage, decodeResponse } from './envelope.ts';
import { KeyEvidence } from './key-evidence.ts';
import { type KeyProof, KeyProofs } from './key-proofs.ts';
import { type MerchantRecords, Merchants, walletIdsOf } from './merchants.ts';
import { type CachedReads, KEPT_RESULTS_SHARE, RequestReads } from './reads.ts';
import { Transport, type TransportOptions } from './transport.ts';
import type {
  CreateWithdrawalIntentBody,
  DepositDTO,
  ListParams,
  Page,
  WalletDTO,
  WithdrawalIntentDTO,
} from './types.ts';
import { notSent, type WithdrawalPostResult, withdrawalPostResult } from './withdrawal-post-result.ts';

export interface UpstreamClientOptions extends TransportOptions {
  /** Micro-cache TTL of 2xx GETs, per caller scope; 0 disables it (coalescing stays on). */
  cacheTtlMs: number;
  /** The byte bound of the REST answers and query deduplication's kept results together. */
  cacheMaxBytes: number;
  /** The share of `cacheMaxBytes` kept results hold; default KEPT_RESULTS_SHARE; 0 with query deduplication off. */
  keptResultsShare?: number;
  /** Callers' scopes (caller-scope.ts), the runtime's; default: under a random secret of this client's own. */
  scopes?: CallerScopes;
  /** Tells the fleet (redis/fleet.ts) that `invalidate` forgot a caller's reads here; awaited. */
  onWithdrawal?: (scope: string) => Promise<void>;
  /** Metrics and traces of upstream calls; none by default. */
  telemetry?: UpstreamTelemetry;
  /** How long a key answered 401 is refused without a call (key-evidence.ts); default REFUSED_KEY_TTL_MS. */
  refusedKeyTtlMs?: number;
  /** The fleet's record of which merchant each wallet is (redis/merchant-records.ts); none: this process's own. */
  merchantRecords?: MerchantRecords;
}

/** What bounds a Caller's REST calls (MerchantWalletClient.caller). */
export interface CallerOptions {
  /** Epoch ms by which every call must be done, retries included; default: none. */
  deadline?: number | undefined;
  /** Calls it may make, retries included; default: no bound. */
  maxCalls?: number | undefined;
  /** Sent upstream as X-Request-Id. */
  requestId?: string | undefined;
}

/** How long a refused key is remembered by default: a key made valid meanwhile waits at most this. */
export const REFUSED_KEY_TTL_MS = 30_000;

/**
 * The one client of the Merchant Wallet REST API (its methods by purpose, and the stages of a call:
 * docs/upstream-client.md). Resolvers reach it only through the per-request loaders and the
 * withdrawal service. Every method takes a Caller and forwards its Authorization unchanged: the
 * gateway has no key of its own. A `get…` answers null on a 404; a read's `fresh` skips the
 * micro-cache and coalescing (for what must see the REST API's present state).
 */
export class MerchantWalletClient {
  private readonly transport: Transport;
  private readonly cache: ResponseCache;
  /** The micro-cache as query deduplication's kept results see it (plugins/kept-results.ts). */
  readonly cachedReads: CachedReads;
  /** Callers' scopes: the ones the runtime hands the server and the rate limiter too. */
  readonly scopes: CallerScopes;
  /** Which keys are one merchant's (merchants.ts): what its keys share is keyed by `merchants.of(scope)`. */
  readonly merchants: Merchants;
  private readonly onWithdrawal: ((scope: string) => Promise<void>) | undefined;
  private readonly evidence: KeyEvidence;
  private readonly proofs: KeyProofs;

  constructor(options: UpstreamClientOptions, clock?: () => number) {
    this.scopes = options.scopes ?? new CallerScopes();
    this.merchants = new Merchants(this.scopes, {
      ...(options.merchantRecords && { records: options.merchantRecords }),
    });
    this.scopes.onSecret.add(() => this.merchants.clear());
    // A merchant's keys take one fair share between them (fair-share.ts).
    this.transport = new Transport(
      { ...options, fairShare: { shareOf: (scope) => this.merchants.of(scope), ...options.fairShare } },
      options.telemetry,
    );
    this.onWithdrawal = options.onWithdrawal;
    const keptMaxBytes = Math.floor(options.cacheMaxBytes * (options.keptResultsShare ?? KEPT_RESULTS_SHARE));
    this.cache = new ResponseCache({
      ...(options.telemetry?.observer && { observer: options.telemetry.observer }),
      ttlMs: options.cacheTtlMs,
      maxBytes: Math.max(1, options.cacheMaxBytes - keptMaxBytes),
      now: clock,
    });
    const now = clock ?? (() => performance.now());
    this.cachedReads = {
      keptMaxBytes,
      ttlMs: options.cacheTtlMs,
      now,
      isCurrent: (reads) => this.cache.isCurrent(reads),
    };
    this.evidence = new KeyEvidence(options.refusedKeyTtlMs ?? REFUSED_KEY_TTL_MS, undefined, (scope) =>
      this.merchants.forget(scope),
    );
    this.proofs = new KeyProofs(this.evidence, (caller) =>
      this.get(caller, 'GET /wallets', '/wallets?page=1&size=1', decodePage<WalletDTO>, true),
    );
  }

  /** A Caller of `authorization`, bounded only as `options` say (the gateway's own: callers.ts). */
  caller(authorization: string, options: CallerOptions = {}): Caller {
    const { deadline, maxCalls = Number.POSITIVE_INFINITY, requestId } = options;
    return {
      authorization,
      scope: this.scopes.scopeOf(authorization),
      calls: { made: 0, max: maxCalls },
      reads: new RequestReads(),
      ...(deadline !== undefined && { deadline }),
      ...(requestId !== undefined && { requestId }),
    };
  }

  /**
   * Whether the REST API accepted this caller's key lately, in this process (key-evidence.ts). Made-up
   * keys never are, so what they send cannot fill per-name slots (the metrics' operation names).
   */
  keyKnownGood(caller: Caller): boolean {
    return this.evidence.isKnownGood(caller.scope);
  }

  /** `keyKnownGood` for an Authorization value, before its request has a Caller (parsing, APQ). */
  authorizationKnownGood(authorization: string): boolean {
    return this.evidence.isKnownGood(this.scopes.scopeOf(authorization));
  }

  /** `keyKnownGood`, by caller scope (scopeOf): for a WebSocket, which has a scope and no Caller. */
  scopeKnownGood(scope: string): boolean {
    return this.evidence.isKnownGood(scope);
  }

  /** KeyProofs.prove: for a WebSocket past the allowance of keys not yet accepted. */
  proveKey(caller: Caller): Promise<KeyProof> {
    return this.proofs.prove(caller);
  }

  /** KeyProofs.proveNow: before replaying a kept withdrawal outcome (R5). */
  proveKeyNow(caller: Caller): Promise<KeyProof> {
    return this.proofs.proveNow(caller);
  }

  /** The caller scope of an Authorization value: an HMAC, the same on every replica of a fleet. */
  scopeOf(authorization: string): string {
    return this.scopes.scopeOf(authorization);
  }

  /** The caller's scope and invalidation generation: reads in one may share an answer. */
  generationScope(caller: Caller): string {
    return this.cache.generationScope(caller.scope);
  }

  /**
   * Learns the caller's merchant (merchants.ts), unless anything is known of it, with one read of its
   * wallets: for a cost counted with the merchant's index before the request read anything. A
   * failure leaves it unknown; either way the key is not read for again.
   */
  async learnMerchant(caller: Caller): Promise<void> {
    if (this.merchants.known(caller.scope)) return;
    await this.listWallets(caller, { page: 1, size: MERCHANT_WALLETS_READ }).catch(() => undefined);
    this.merchants.tried(caller.scope);
  }

  listWallets(caller: Caller, params: ListParams): Promise<Page<WalletDTO>> {
    return this.get(caller, 'GET /wallets', `/wallets${query(params)}`, decodePage<WalletDTO>);
  }

  getWallet(caller: Caller, id: string): Promise<WalletDTO | null> {
    return this.getOrNull(caller, 'GET /wallets/{id}', `/wallets/${encodeURIComponent(id)}`);
  }

  listDeposits(
    caller: Caller,
    params: ListParams,
    options: { fresh?: boolean } = {},
  ): Promise<Page<DepositDTO>> {
    return this.get(
      caller,
      'GET /deposits',
      `/deposits${query(params)}`,
      decodePage<DepositDTO>,
      options.fresh,
    );
  }

  getDeposit(caller: Caller, id: string, options: { fresh?: boolean } = {}): Promise<DepositDTO | null> {
    return this.getOrNull(caller, 'GET /deposits/{id}', `/deposits/${encodeURIComponent(id)}`, options.fresh);
  }

  listWithdrawalIntents(
    caller: Caller,
    params: ListParams,
    options: { fresh?: boolean } = {},
  ): Promise<Page<WithdrawalIntentDTO>> {
    const path = `/withdrawal-intents${query(params)}`;
    return this.get(caller, 'GET /withdrawal-intents', path, decodePage<WithdrawalIntentDTO>, options.fresh);
  }

  getWithdrawalIntent(
    caller: Caller,
    id: string,
    options: { fresh?: boolean } = {},
  ): Promise<WithdrawalIntentDTO | null> {
    return this.getOrNull(
      caller,
      'GET /withdrawal-intents/{id}',
      `/withdrawal-intents/${encodeURIComponent(id)}`,
      options.fresh,
    );
  }

  /**
   * POST /withdrawal-intents, sent once, never retried (a second POST could move money twice). Does
   * not throw: what the POST did is decided here, from the HTTP facts, as a WithdrawalPostResult.
   */
  async createWithdrawalIntent(
    caller: Caller,
    body: CreateWithdrawalIntentBody,
    idempotencyKey: string | null,
  ): Promise<WithdrawalPostResult> {
    const headers: Record<string, string> = idempotencyKey ? { 'idempotency-key': idempotencyKey } : {};
    let response: UpstreamResponse;
    try {
      response = await this.evidence.send(caller.scope, () =>
        this.transport.post(
          caller,
          'POST /withdrawal-intents',
          '/withdrawal-intents',
          headers,
          JSON.stringify(body),
        ),
      );
    } catch (error) {
      // The transport and the key evidence throw a GatewayError only for a POST never sent; anything
      // else (a timeout, a reset) may follow one that reached the REST API.
      if (error instanceof GatewayError) return { outcome: 'not_sent', error: notSent(error) };
      return { outcome: 'unknown', error: outcomeUnknown(idempotencyKey, error) };
    }
    return withdrawalPostResult(response, idempotencyKey);
  }

  /**
   * Money of this caller moved, or may have (R9): its cached reads and kept results end, here and,
   * through `onWithdrawal` (awaited), on the fleet; a failure to tell the fleet hides no answer.
   */
  async invalidate(caller: Caller): Promise<void> {
    this.cache.invalidate(caller.scope);
    await this.onWithdrawal?.(caller.scope).catch(() => {});
  }

  /** `invalidate` in this process only, by scope: for a withdrawal another process made. */
  invalidateScope(scope: string): void {
    this.cache.invalidate(scope);
  }

  /** Each route's circuit state ('closed', 'open', 'half-open'), for health and metrics. */
  circuits() {
    return this.transport.circuits();
  }

  /** Whether the REST API answers HTTP at all (for /readyz). */
  ping(): Promise<boolean> {
    return this.transport.ping();
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  /** What the client holds: once every request settled, all 0 but idle keep-alive sockets (fault tests). */
  activity() {
    const { calls, timers, pool } = this.transport.activity();
    return { calls, timers, coalescing: this.cache.inFlightCount, pool };
  }

  private async getOrNull<T extends { id: string }>(
    caller: Caller,
    route: string,
    path: string,
    fresh = false,
  ): Promise<T | null> {
    try {
      return await this.get(caller, route, path, decodeOne<T>, fresh);
    } catch (error) {
      if ((error as GatewayError).code === 'NOT_FOUND') return null;
      throw error;
    }
  }

  /** A GET through the micro-cache and coalescing (unless `fresh`: straight to the REST API), then decoded. */
  private async get<T>(
    caller: Caller,
    route: string,
    path: string,
    decode: Decoder<T>,
    fresh = false,
  ): Promise<T> {
    const read = () => this.evidence.send(caller.scope, () => this.transport.get(caller, route, path));
    if (fresh) caller.reads.read(null);
    const response = fresh ? await read() : await this.cache.get(caller.scope, path, read, caller.reads);
    const value = decodeResponse(response, decode);
    // Not for a key refused (401) while this answer was on its way: it stays forgotten.
    if (!this.evidence.isRefused(caller.scope)) this.merchants.learn(caller.scope, walletIdsIn(route, value));
    return value;
  }
}

/** Wallets read to learn a key's merchant: merchants have few, and one shared wallet is enough. */
const MERCHANT_WALLETS_READ = 100;

/** The wallet ids a decoded 2xx answer names: each is a wallet of the caller's merchant (merchants.ts). */
function walletIdsIn(route: string, value: unknown): string[] {
  switch (route) {
    case 'GET /wallets':
      return (value as Page<WalletDTO>).items.map((wallet) => wallet.id);
    case 'GET /wallets/{id}':
      return [(value as WalletDTO).id];
    case 'GET /deposits':
    case 'GET /withdrawal-intents':
      return walletIdsOf((value as Page<DepositDTO | WithdrawalIntentDTO>).items);
    case 'GET /deposits/{id}':
    case 'GET /withdrawal-intents/{id}':
      return walletIdsOf([value as DepositDTO | WithdrawalIntentDTO]);
    default:
      return [];
  }
}

function query(params: ListParams): string {
  const search = new URLSearchParams({ page: String(params.page), size: String(params.size) });
  if (params.statusIn?.length) search.set('statusIn', params.statusIn.join(','));
  return `?${search.toString().replace(/%2C/g, ',')}`;
}
