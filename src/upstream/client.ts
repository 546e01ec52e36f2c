import { setTimeout as sleep } from 'node:timers/promises';
import { type Dispatcher, Pool } from 'undici';
import {
  fromUpstreamStatus,
  type GatewayError,
  outcomeUnknown,
  upstreamMalformed,
  upstreamTimeout,
  upstreamUnavailable,
} from '../errors.ts';
import { type CachedResponse, ResponseCache } from './cache.ts';
import type {
  CreateWithdrawalIntentBody,
  DepositDTO,
  ListParams,
  Page,
  PagingDTO,
  WalletDTO,
  WithdrawalIntentDTO,
} from './types.ts';

/**
 * The one client of the Merchant Wallet REST API. It owns URLs, headers, timeouts, retries,
 * envelope decoding and error mapping; resolvers only call its methods. Every method takes the
 * caller's Authorization header value and forwards it unchanged: the gateway has no key of its own.
 */

export interface UpstreamClientOptions {
  baseURL: string;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** Extra attempts for an idempotent GET after a connection error or a 502/503/504. */
  maxRetries: number;
  /** Base of the jittered exponential backoff between GET attempts. */
  retryBaseDelayMs: number;
  /** A 429's Retry-After up to this long is waited out and the GET retried; longer ones are surfaced. */
  maxRetryAfterMs: number;
  connections: number;
  maxResponseBytes: number;
  /** Micro-cache TTL for 2xx GETs, per caller key; 0 disables it (coalescing stays on). */
  cacheTtlMs: number;
  cacheMaxBytes: number;
}

export const DEFAULT_UPSTREAM_OPTIONS: Omit<UpstreamClientOptions, 'baseURL'> = {
  connectTimeoutMs: 2_000,
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 10_000,
  maxRetries: 2,
  retryBaseDelayMs: 50,
  maxRetryAfterMs: 1_000,
  connections: 64,
  maxResponseBytes: 16 * 1024 * 1024,
  cacheTtlMs: 1_000,
  cacheMaxBytes: 32 * 1024 * 1024,
};

const BASE_PATH = '/external/v1';
const RETRYABLE_STATUS = new Set([502, 503, 504]);
const CONNECTION_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
]);
const TIMEOUT_ERRORS = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  // The GraphQL request's own deadline (see Caller.deadline).
  'DEADLINE',
]);

type Decoder<T> = (data: unknown, paging: unknown) => T;

/**
 * Who a call is made for: the caller's Authorization value, forwarded unchanged, and its cache
 * scope (an HMAC of it), computed once per GraphQL request by `client.caller()`.
 */
export interface Caller {
  readonly authorization: string;
  readonly cacheScope: string;
  /** Epoch ms by which every upstream call of this GraphQL request must be done (retries included). */
  readonly deadline?: number;
}

export class MerchantWalletClient {
  private readonly pool: Pool;
  private readonly options: UpstreamClientOptions;
  private readonly pathPrefix: string;
  private readonly cache: ResponseCache;
  /** Upstream calls under way and timers pending (deadlines, backoffs), for activity(). */
  private calls = 0;
  private timers = 0;

  constructor(options: UpstreamClientOptions, clock?: () => number) {
    this.options = options;
    this.cache = new ResponseCache({
      ttlMs: options.cacheTtlMs,
      maxBytes: options.cacheMaxBytes,
      now: clock,
    });
    const url = new URL(options.baseURL);
    this.pathPrefix = url.pathname.replace(/\/$/, '') + BASE_PATH;
    this.pool = new Pool(url.origin, {
      connections: options.connections,
      connectTimeout: options.connectTimeoutMs,
      headersTimeout: options.headersTimeoutMs,
      bodyTimeout: options.bodyTimeoutMs,
      keepAliveTimeout: 30_000,
      maxResponseSize: options.maxResponseBytes,
    });
  }

  caller(authorization: string, deadline?: number): Caller {
    return {
      authorization,
      cacheScope: this.cache.scopeOf(authorization),
      ...(deadline !== undefined && { deadline }),
    };
  }

  /**
   * Reads made in the same sharing scope may share one answer: the same caller, with no
   * withdrawal created by it in between (see ResponseCache.invalidate).
   */
  sharingScope(auth: Caller): string {
    return this.cache.versionedScope(auth.cacheScope);
  }

  listWallets(auth: Caller, params: ListParams): Promise<Page<WalletDTO>> {
    return this.get(auth, `/wallets${query(params)}`, decodePage<WalletDTO>);
  }

  /** The wallet, or null when the REST API answers 404 for this merchant. */
  getWallet(auth: Caller, id: string): Promise<WalletDTO | null> {
    return this.getOrNull(auth, `/wallets/${encodeURIComponent(id)}`);
  }

  listDeposits(auth: Caller, params: ListParams): Promise<Page<DepositDTO>> {
    return this.get(auth, `/deposits${query(params)}`, decodePage<DepositDTO>);
  }

  getDeposit(auth: Caller, id: string): Promise<DepositDTO | null> {
    return this.getOrNull(auth, `/deposits/${encodeURIComponent(id)}`);
  }

  /** `fresh` skips the micro-cache and coalescing: for reconciling a withdrawal, nothing stale will do. */
  listWithdrawalIntents(
    auth: Caller,
    params: ListParams,
    options: { fresh?: boolean } = {},
  ): Promise<Page<WithdrawalIntentDTO>> {
    const path = `/withdrawal-intents${query(params)}`;
    if (options.fresh) {
      return this.getWithRetries(auth, path).then((r) => decodeResponse(r, decodePage<WithdrawalIntentDTO>));
    }
    return this.get(auth, path, decodePage<WithdrawalIntentDTO>);
  }

  getWithdrawalIntent(auth: Caller, id: string): Promise<WithdrawalIntentDTO | null> {
    return this.getOrNull(auth, `/withdrawal-intents/${encodeURIComponent(id)}`);
  }

  /**
   * POST /withdrawal-intents. Never retried: a second attempt could move money twice. When the
   * request may have reached the REST API and no answer came back (timeout, reset, 5xx), this
   * throws OUTCOME_UNKNOWN; a 4xx is a definite refusal and throws the mapped GatewayError.
   */
  async createWithdrawalIntent(
    auth: Caller,
    body: CreateWithdrawalIntentBody,
    idempotencyKey: string | null,
  ): Promise<WithdrawalIntentDTO> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    let response: RawResponse;
    try {
      response = await this.send('POST', '/withdrawal-intents', auth, headers, JSON.stringify(body));
    } catch (error) {
      throw outcomeUnknown(idempotencyKey, error);
    }
    if (response.status >= 500) {
      throw outcomeUnknown(idempotencyKey, null, { status: response.status, code: errorCode(response.json) });
    }
    const intent = decodeResponse(response, decodeOne<WithdrawalIntentDTO>);
    // Balances moved: this caller's next reads must not come from the micro-cache.
    this.cache.invalidate(auth.cacheScope);
    return intent;
  }

  /** Whether the REST API answers HTTP at all; a keyless probe gets a 401, which counts. */
  async ping(): Promise<boolean> {
    const response = await this.pool.request({ method: 'GET', path: `${this.pathPrefix}/wallets` });
    await response.body.dump();
    return response.statusCode < 500;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  /**
   * What the client holds right now. Once every GraphQL request has settled, everything here is 0
   * except the pool's idle keep-alive sockets (`connected`, `free`): the fault tests assert it, so
   * a call or timer that outlives its request is caught.
   */
  activity() {
    const { connected, free, pending, queued, running } = this.pool.stats;
    return {
      calls: this.calls,
      timers: this.timers,
      coalescing: this.cache.inFlightCount,
      pool: { connected, free, pending, queued, running },
    };
  }

  private async getOrNull<T extends { id: string }>(auth: Caller, path: string): Promise<T | null> {
    try {
      return await this.get(auth, path, decodeOne<T>);
    } catch (error) {
      if ((error as GatewayError).code === 'NOT_FOUND') return null;
      throw error;
    }
  }

  /** A GET through the micro-cache and coalescing, then decoded. */
  private async get<T>(auth: Caller, path: string, decode: Decoder<T>): Promise<T> {
    const response = await this.cache.get(auth.cacheScope, path, () => this.getWithRetries(auth, path));
    return decodeResponse(response, decode);
  }

  /** One GET with bounded, jittered retries on connection errors and 502/503/504. */
  private async getWithRetries(auth: Caller, path: string): Promise<CachedResponse> {
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= this.options.maxRetries || !this.hasTimeLeft(auth, attempt);
      let response: RawResponse;
      try {
        response = await this.send('GET', path, auth, {}, undefined);
      } catch (error) {
        if (!last && CONNECTION_ERRORS.has(errorCodeOf(error))) {
          await this.backoff(attempt);
          continue;
        }
        throw transportError(error);
      }
      if (!last && RETRYABLE_STATUS.has(response.status)) {
        await this.backoff(attempt);
        continue;
      }
      const wait = response.retryAfterMs;
      if (
        !last &&
        response.status === 429 &&
        wait !== undefined &&
        wait <= this.options.maxRetryAfterMs &&
        (auth.deadline === undefined || Date.now() + wait < auth.deadline)
      ) {
        await this.sleep(wait);
        continue;
      }
      return response;
    }
  }

  private backoff(attempt: number): Promise<void> {
    const ceiling = this.options.retryBaseDelayMs * 2 ** attempt;
    return this.sleep(Math.random() * ceiling);
  }

  private async sleep(ms: number): Promise<void> {
    this.timers++;
    try {
      await sleep(ms);
    } finally {
      this.timers--;
    }
  }

  /** Whether another attempt still fits before the caller's deadline. */
  private hasTimeLeft(auth: Caller, attempt: number): boolean {
    return (
      auth.deadline === undefined || Date.now() + this.options.retryBaseDelayMs * 2 ** attempt < auth.deadline
    );
  }

  private async send(
    method: 'GET' | 'POST',
    path: string,
    auth: Caller,
    headers: Record<string, string>,
    body: string | undefined,
  ): Promise<CachedResponse> {
    const remaining = auth.deadline === undefined ? undefined : auth.deadline - Date.now();
    if (remaining !== undefined && remaining <= 0)
      throw Object.assign(new Error('request deadline passed'), { code: 'DEADLINE' });
    // A timer of our own rather than AbortSignal.timeout(): that one stays scheduled until it fires,
    // up to REQUEST_DEADLINE_MS after the call ended; this one is cleared as soon as the call ends.
    const deadline = remaining === undefined ? undefined : new AbortController();
    const timer =
      deadline &&
      setTimeout(
        () => deadline.abort(new DOMException('request deadline passed', 'TimeoutError')),
        remaining,
      );
    if (timer) this.timers++;
    this.calls++;
    let response: Dispatcher.ResponseData;
    let text: string;
    try {
      response = await this.pool.request({
        method,
        path: this.pathPrefix + path,
        headers: { accept: 'application/json', authorization: auth.authorization, ...headers },
        body,
        ...(deadline && { signal: deadline.signal }),
      });
      text = await response.body.text();
    } catch (error) {
      // However undici words an abort, past the deadline it is the deadline.
      if (deadline?.signal.aborted) {
        throw Object.assign(new Error('request deadline passed', { cause: error }), { code: 'DEADLINE' });
      }
      throw error;
    } finally {
      this.calls--;
      if (timer) {
        clearTimeout(timer);
        this.timers--;
      }
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const retryAfter = response.headers['retry-after'];
    const retryAfterMs = parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
    return {
      status: response.statusCode,
      json,
      text,
      ...(retryAfterMs !== undefined && { retryAfterMs }),
    };
  }
}

/** `json` is the parsed body, or undefined when it was not JSON. */
type RawResponse = CachedResponse;

function query(params: ListParams): string {
  const search = new URLSearchParams({ page: String(params.page), size: String(params.size) });
  if (params.statusIn?.length) search.set('statusIn', params.statusIn.join(','));
  return `?${search.toString().replace(/%2C/g, ',')}`;
}

/** Retry-After as delay-seconds or an HTTP date, in milliseconds from now. */
function parseRetryAfter(value: string | undefined): number | undefined {
  if (!value) return undefined;
  if (/^\d{1,6}$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function decodeResponse<T>(response: RawResponse, decode: Decoder<T>): T {
  const { status, json } = response;
  if (status < 200 || status >= 300) {
    const envelope = isObject(json) ? json : {};
    const code = typeof envelope.code === 'string' ? envelope.code : null;
    const message = typeof envelope.message === 'string' ? envelope.message : null;
    throw fromUpstreamStatus(status, code, message, response.retryAfterMs);
  }
  if (!isObject(json)) throw upstreamMalformed(status, 'not a JSON object');
  if (json.code !== 'ok') throw upstreamMalformed(status, 'envelope code is not "ok"');
  return decode(json.data, json.paging);
}

function decodeOne<T extends { id: string }>(data: unknown): T {
  if (!isObject(data) || typeof data.id !== 'string') throw upstreamMalformed(200, 'data is not a resource');
  return data as unknown as T;
}

function decodePage<T extends { id: string }>(data: unknown, paging: unknown): Page<T> {
  if (!Array.isArray(data)) throw upstreamMalformed(200, 'data is not a list');
  if (!isPaging(paging)) throw upstreamMalformed(200, 'paging is missing or malformed');
  for (const item of data) decodeOne<T>(item);
  return { items: data as T[], paging };
}

function isPaging(value: unknown): value is PagingDTO {
  if (!isObject(value)) return false;
  return ['size', 'page', 'count', 'limit', 'totalCount', 'totalPages'].every((k) =>
    Number.isSafeInteger(value[k]),
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorCode(json: unknown): string | null {
  return isObject(json) && typeof json.code === 'string' ? json.code : null;
}

function errorCodeOf(error: unknown): string {
  // The request's deadline aborts with a DOMException named TimeoutError (see send()).
  if ((error as { name?: unknown })?.name === 'TimeoutError') return 'DEADLINE';
  const code = (error as { code?: unknown })?.code ?? (error as { cause?: { code?: unknown } })?.cause?.code;
  return typeof code === 'string' ? code : '';
}

function transportError(error: unknown): GatewayError {
  const code = errorCodeOf(error);
  if (TIMEOUT_ERRORS.has(code)) return upstreamTimeout(error);
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return upstreamMalformed(200, 'body over the size cap');
  if (CONNECTION_ERRORS.has(code)) return upstreamUnavailable(error);
  return upstreamUnavailable(error);
}
