import { createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/**
 * Who a caller is, wherever something is kept across requests: its scope, an HMAC of its
 * Authorization value under a secret, never the key itself. The micro-cache and coalescing key
 * their entries by it (cache.ts), so an entry can only ever answer the same key that fetched it;
 * query deduplication shares answers within it (MerchantWalletClient.generationScope); rate limits,
 * WebSockets, withdrawals' idempotency records and the fleet's invalidations name a caller by it.
 * The secret is random per process, or the fleet's (fleetScopeSecret), so that every replica
 * gives a key the same scope.
 */

/** Keys whose scope is kept (about 200 bytes each). */
const SCOPES_KEPT = 10_000;

export class CallerScopes {
  // A KeyObject, not a Buffer: createHmac then skips importing the key on every call (docs/benchmark.md#figures-behind-design-choices).
  private secret: KeyObject;
  /**
   * The scopes of the keys seen lately: an HMAC is a visible share of a cached request's CPU
   * (docs/benchmark.md#figures-behind-design-choices), and one key sends thousands of requests. Keyed by the whole Authorization
   * value (a shorter digest could let two keys share a scope); a flood of made-up keys only
   * churns it, each costing the HMAC it cost before.
   */
  private readonly scopes = new LRUCache<string, string>({ max: SCOPES_KEPT });

  /** `secret`: the HMAC secret; a fleet shares one (see fleetScopeSecret). Default: random per process. */
  constructor(secret: Buffer = randomBytes(32)) {
    this.secret = createSecretKey(secret);
  }

  /** The scope of an Authorization value; computed once per GraphQL request (see Caller). */
  scopeOf(authorization: string): string {
    let scope = this.scopes.get(authorization);
    if (scope === undefined) {
      scope = createHmac('sha256', this.secret).update(authorization).digest('base64url');
      this.scopes.set(authorization, scope);
    }
    return scope;
  }

  /**
   * The tag of a wallet id, for grouping keys by merchant (merchants.ts): an HMAC under the same
   * secret, so every replica of a fleet agrees on it, over a prefix no Authorization value has
   * (a scope is of a whole Authorization value, `Bearer …`), so a tag never equals a scope.
   */
  tagOf(walletId: string): string {
    return createHmac('sha256', this.secret).update(`wallet\n${walletId}`).digest('base64url');
  }

  /**
   * From now on, scopes are HMACs under this secret (the fleet's, when Redis lost it and another
   * was agreed: keepFleetScopeSecret), for every key at once: the scopes kept are forgotten.
   * Micro-cache entries under the old scopes become unreachable and age out.
   */
  useSecret(secret: Buffer): void {
    this.secret = createSecretKey(secret);
    this.scopes.clear();
    for (const listener of this.onSecret) listener();
  }

  /** Called after `useSecret`: whatever was derived from the old secret is to be dropped. */
  readonly onSecret = new Set<() => void>();
}
