import { LRUCache } from 'lru-cache';
import type { GatewayError } from '../errors/errors.ts';
import type { UpstreamResponse } from './call.ts';
import { envelopeCode } from './envelope.ts';
import { fromUpstreamStatus, USER_ERROR_CODES } from './error-mapping.ts';

/**
 * What the REST API said of each caller scope's key lately, in this process; the client sends every
 * call through `send`. Known good (provesKey, within 10 minutes): calls go at once. Refused (a 401
 * within `refusedTtlMs`): calls fail with that UNAUTHENTICATED error, unsent. Neither: the key's
 * first call goes alone, the others wait for its answer. Any other answer is no evidence.
 * docs/upstream-client.md#what-the-rest-api-said-of-each-key.
 */
export class KeyEvidence {
  private readonly knownGood: LRUCache<string, true>;
  /** With the `code` of the REST API's 401, from which its error is rebuilt. */
  private readonly refused: LRUCache<string, { code: string | null }> | null;
  /** The first call of each key not known, settled (never rejected) once its answer was noted. */
  private readonly firstCalls = new Map<string, Promise<void>>();

  /** Told of each 401: the key no longer counts as its merchant's (merchants.ts). */
  private readonly onRefused: ((scope: string) => void) | undefined;

  constructor(refusedTtlMs: number, now?: () => number, onRefused?: (scope: string) => void) {
    this.onRefused = onRefused;
    // A test clock must be read on every access, not memoised between timer ticks.
    const clock = now && { perf: { now }, ttlResolution: 0 };
    this.knownGood = new LRUCache({ max: SCOPES_KEPT, ttl: KNOWN_GOOD_TTL_MS, ...clock });
    this.refused = refusedTtlMs > 0 ? new LRUCache({ max: SCOPES_KEPT, ttl: refusedTtlMs, ...clock }) : null;
  }

  isKnownGood(scope: string): boolean {
    return this.knownGood.has(scope);
  }

  isRefused(scope: string): boolean {
    return this.refused?.has(scope) ?? false;
  }

  refusal(scope: string): GatewayError | undefined {
    const refused = this.refused?.get(scope);
    return refused && fromUpstreamStatus(401, refused.code, null);
  }

  /** Sends `send` when the evidence allows (see the class); rejects unsent with a remembered refusal. */
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
 * A 2xx, or a user error's refusal, which the REST API gives only once it knows the merchant (not
 * `bad_request`, which may come before the key is looked at).
 */
function provesKey(response: UpstreamResponse): boolean {
  if (response.status >= 200 && response.status < 300) return true;
  if (response.status < 400 || response.status >= 500 || response.status === 401 || response.status === 403) {
    return false;
  }
  const code = envelopeCode(response.json);
  return code !== null && USER_ERROR_CODES.has(code);
}

const SCOPES_KEPT = 10_000;
const KNOWN_GOOD_TTL_MS = 10 * 60_000;
