import { LRUCache } from 'lru-cache';
import type { GatewayError } from '../errors/errors.ts';
import type { UpstreamResponse } from './call.ts';
import { envelopeCode } from './envelope.ts';
import { fromUpstreamStatus, USER_ERROR_CODES } from './error-mapping.ts';

/**
 * What the REST API said of each caller key lately, by caller scope (caller-scope.ts: an HMAC,
 * never the key), in this process: the upstream client admits every call through it.
 *
 * - Known good: in the last 10 minutes, a 2xx, or a business refusal that only the key's merchant
 *   can get (provesKey). Calls go out freely.
 * - Refused: a 401 in the last `refusedTtlMs` (30 s). Calls are answered with the same
 *   UNAUTHENTICATED error, without a REST call, so a made-up key costs the REST API one call per
 *   TTL however many requests, fields or sockets it sends.
 * - Neither (a key not seen lately): its first call goes alone, and any other call for it waits
 *   for that one's answer: then fails fast if it was a 401, and goes ahead otherwise. So a request
 *   with many root fields makes one call, not one per field, when the key turns out made up; a
 *   real key's first request pays one round trip before its other calls start.
 *
 * A 403 (a real key not allowed this operation), a 404, a 5xx, a timeout or a call refused before it
 * left are no evidence either way: the key stays as it was, and calls waiting behind one go ahead.
 * A 2xx forgets a refusal, and a 401 a known-good mark (a revoked key). Both memories are bounded by
 * count; a key pushed out is simply not known any more.
 */
export class KeyEvidence {
  private readonly knownGood: LRUCache<string, true>;
  /** The refused scopes, with the `code` of the REST API's 401 (its error is rebuilt from it). */
  private readonly refused: LRUCache<string, { code: string | null }> | null;
  /**
   * The first call of each key not known yet, settled (never rejected) once its answer was noted;
   * one entry per call in flight at most.
   */
  private readonly firstCalls = new Map<string, Promise<void>>();

  /**
   * `refusedTtlMs`: how long a 401 is remembered; 0 remembers none (calls still wait for a first
   * one). `now`: the clock of both TTLs (a test's); default the LRU's own (performance.now).
   * `onRefused`: told of each 401 (the key no longer counts as its merchant's: merchants.ts).
   */
  private readonly onRefused: ((scope: string) => void) | undefined;

  constructor(refusedTtlMs: number, now?: () => number, onRefused?: (scope: string) => void) {
    this.onRefused = onRefused;
    // A test clock must be read on every access, not memoised between timer ticks.
    const clock = now && { perf: { now }, ttlResolution: 0 };
    this.knownGood = new LRUCache({ max: SCOPES_KEPT, ttl: KNOWN_GOOD_TTL_MS, ...clock });
    this.refused = refusedTtlMs > 0 ? new LRUCache({ max: SCOPES_KEPT, ttl: refusedTtlMs, ...clock }) : null;
  }

  /** Whether the REST API accepted this scope's key in the last 10 minutes (see the class comment). */
  isKnownGood(scope: string): boolean {
    return this.knownGood.has(scope);
  }

  /** Whether the REST API refused this scope's key within the TTL. */
  isRefused(scope: string): boolean {
    return this.refused?.has(scope) ?? false;
  }

  /** The UNAUTHENTICATED error of a key the REST API refused within the TTL, else undefined. */
  refusal(scope: string): GatewayError | undefined {
    const refused = this.refused?.get(scope);
    return refused && fromUpstreamStatus(401, refused.code, null);
  }

  /**
   * Sends `send` for the scope when the evidence allows (see the class comment): at once for a key
   * accepted lately; after the key's first call has answered for a key not known; alone, as that
   * first call, when none is under way. Rejects with the remembered refusal, unsent, for a key
   * refused within the TTL (before or after waiting). Every answer is noted.
   */
  async send(scope: string, send: () => Promise<UpstreamResponse>): Promise<UpstreamResponse> {
    this.throwIfRefused(scope);
    if (!this.knownGood.has(scope)) {
      const first = this.firstCalls.get(scope);
      if (!first) return this.sendFirst(scope, send);
      await first;
      this.throwIfRefused(scope);
    }
    return this.noted(scope, send());
  }

  /** Resolves once the key's first call under way, if any, has been answered and noted. */
  firstAnswer(scope: string): Promise<void> {
    return this.firstCalls.get(scope) ?? Promise.resolve();
  }

  private sendFirst(scope: string, send: () => Promise<UpstreamResponse>): Promise<UpstreamResponse> {
    const call = this.noted(scope, send());
    const settled = call.then(
      () => {},
      () => {},
    );
    // Deleted before any waiter resumes: each resumes after `settled`, which this chain precedes.
    this.firstCalls.set(
      scope,
      settled.then(() => {
        this.firstCalls.delete(scope);
      }),
    );
    return call;
  }

  private async noted(scope: string, call: Promise<UpstreamResponse>): Promise<UpstreamResponse> {
    const response = await call;
    if (provesKey(response)) {
      this.knownGood.set(scope, true);
      this.refused?.delete(scope);
    } else if (response.status === 401) {
      this.knownGood.delete(scope);
      // The code as the client is shown it (a machine word, or null), not whatever the body held.
      const code = fromUpstreamStatus(401, envelopeCode(response.json), null).upstream?.code ?? null;
      this.refused?.set(scope, { code });
      this.onRefused?.(scope);
    }
    return response;
  }

  private throwIfRefused(scope: string): void {
    const refusal = this.refusal(scope);
    if (refusal) throw refusal;
  }
}

/**
 * Whether an answer says the REST API accepted the key: a 2xx, or a refusal the spec documents for
 * a merchant's own data (a user error's code: a withdrawal over the balance, a wallet that is not
 * the merchant's, an idempotency key reused), which the REST API gives only once it knows the merchant. Not a bare
 * `bad_request`, which names a malformed request and could come before the key is looked at.
 */
function provesKey(response: UpstreamResponse): boolean {
  if (response.status >= 200 && response.status < 300) return true;
  if (response.status < 400 || response.status >= 500 || response.status === 401 || response.status === 403) {
    return false;
  }
  const code = envelopeCode(response.json);
  return code !== null && USER_ERROR_CODES.has(code);
}

/** Keys each memory holds (a scope and its entry: about 200 bytes). */
const SCOPES_KEPT = 10_000;
/** How long a 2xx counts as the key being accepted (`keyKnownGood` in the upstream client). */
const KNOWN_GOOD_TTL_MS = 10 * 60_000;
