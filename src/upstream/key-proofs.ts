import { GatewayError } from '../errors/errors.ts';
import type { Caller } from './caller.ts';
import type { KeyEvidence } from './key-evidence.ts';

/**
 * Whether the REST API accepts a caller's key (MerchantWalletClient.proveKey), decided once where
 * the answer is read.
 */
export type KeyProof =
  /** A 2xx (or a refusal only its merchant can get), now or in the last 10 minutes. */
  | { kind: 'accepted' }
  /** A 401, now or remembered: `error` is the UNAUTHENTICATED error the caller is answered with. */
  | { kind: 'refused'; error: GatewayError }
  /** No answer that says either (a 403, a 5xx, a timeout, an open circuit): try again later. */
  | { kind: 'unproven' };

/**
 * The upstream client's answers to "does the REST API accept this key?" (MerchantWalletClient.proveKey
 * and proveKeyNow): from what the REST API said of the key lately (key-evidence.ts), else from one
 * fresh GET of the smallest page of wallets, which `ask` sends.
 */
export class KeyProofs {
  private readonly evidence: KeyEvidence;
  /** One fresh GET (never cached or coalesced) of the smallest page of wallets; throws as any read. */
  private readonly ask: (caller: Caller) => Promise<unknown>;
  /**
   * proveNow's GET under way for each scope, and the proof shared by those asked meanwhile
   * (sent once it answered); one entry per key with a GET in flight.
   */
  private readonly proofsUnderWay = new Map<
    string,
    { running: Promise<KeyProof>; next: Promise<KeyProof> | null }
  >();

  constructor(evidence: KeyEvidence, ask: (caller: Caller) => Promise<unknown>) {
    this.evidence = evidence;
    this.ask = ask;
  }

  /**
   * Whether the REST API accepts the caller's key: from the evidence when it accepted or refused
   * it lately, or from the answer of the key's first call under way (no call of its own), else one
   * GET of the smallest page of wallets (fresh: never cached or coalesced). For deciding about a
   * key before serving what was kept for it (a replayed withdrawal, a WebSocket past the allowance
   * of keys not yet accepted).
   */
  async prove(caller: Caller): Promise<KeyProof> {
    const scope = caller.scope;
    // A call of this key already under way answers for it: many proofs at once make one call.
    await this.evidence.firstAnswer(scope);
    if (this.evidence.isKnownGood(scope)) return { kind: 'accepted' };
    const refusal = this.evidence.refusal(scope);
    if (refusal) return { kind: 'refused', error: refusal };
    return this.askKey(caller);
  }

  /**
   * Whether the REST API accepts the caller's key now: one fresh GET of the smallest page of
   * wallets, whatever it said lately, except for a key refused within the TTL (refused, no call).
   * Proofs asked for one key while its GET is under way share the next GET, started once that one
   * answered: every proof is answered by a call sent after it was asked. Before replaying a kept
   * withdrawal outcome: a key revoked a moment ago must not be answered it.
   */
  proveNow(caller: Caller): Promise<KeyProof> {
    const scope = caller.scope;
    const refusal = this.evidence.refusal(scope);
    if (refusal) return Promise.resolve({ kind: 'refused', error: refusal });
    const under = this.proofsUnderWay.get(scope);
    if (under) {
      under.next ??= under.running.then(() => this.proveNow(caller));
      return under.next;
    }
    const entry: { running: Promise<KeyProof>; next: Promise<KeyProof> | null } = {
      running: this.askKey(caller).finally(() => {
        if (this.proofsUnderWay.get(scope) === entry) this.proofsUnderWay.delete(scope);
      }),
      next: null,
    };
    this.proofsUnderWay.set(scope, entry);
    return entry.running;
  }

  /** One fresh GET of the smallest page of wallets, read as a KeyProof. */
  private async askKey(caller: Caller): Promise<KeyProof> {
    try {
      await this.ask(caller);
      return { kind: 'accepted' };
    } catch (error) {
      if (error instanceof GatewayError && error.code === 'UNAUTHENTICATED') {
        return { kind: 'refused', error };
      }
      return { kind: 'unproven' };
    }
  }
}
