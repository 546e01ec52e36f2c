import { createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/**
 * A caller's scope: an HMAC of its Authorization value, never the key, which names the caller
 * wherever something is kept across requests. The secret is random per process, or the fleet's
 * (fleetScopeSecret), so that every replica gives a key the same scope.
 */

const SCOPES_KEPT = 10_000;

export class CallerScopes {
  private secret: KeyObject;
  /** Recent keys' scopes, by whole Authorization value (docs/upstream-client.md, Micro-cache). */
  private readonly scopes = new LRUCache<string, string>({ max: SCOPES_KEPT });

  constructor(secret: Buffer = randomBytes(32)) {
    this.secret = createSecretKey(secret);
  }

  scopeOf(authorization: string): string {
    let scope = this.scopes.get(authorization);
    if (scope === undefined) {
      scope = createHmac('sha256', this.secret).update(authorization).digest('base64url');
      this.scopes.set(authorization, scope);
    }
    return scope;
  }

  /** A wallet id's tag (merchants.ts), under a prefix no Authorization value has: never equal to a scope. */
  tagOf(walletId: string): string {
    return createHmac('sha256', this.secret).update(`wallet\n${walletId}`).digest('base64url');
  }

  /** Scopes are HMACs under `secret` from now on; the scopes kept are forgotten and `onSecret` told. */
  useSecret(secret: Buffer): void {
    this.secret = createSecretKey(secret);
    this.scopes.clear();
    for (const listener of this.onSecret) listener();
  }

  readonly onSecret = new Set<() => void>();
}
