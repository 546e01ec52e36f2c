import { GatewayError } from '../errors/errors.ts';
import type { Caller } from './caller.ts';
import type { KeyEvidence } from './key-evidence.ts';

/** Whether the REST API accepts a caller's key (MerchantWalletClient.proveKey), decided where it is read. */
export type KeyProof =
  /** A 2xx (or a refusal only its merchant can get), now or in the last 10 minutes. */
  | { kind: 'accepted' }
  /** A 401, now or remembered: `error` is the UNAUTHENTICATED error the caller is answered with. */
  | { kind: 'refused'; error: GatewayError }
  /** No answer that says either (a 403, a 5xx, a timeout, an open circuit): try again later. */
  | { kind: 'unproven' };

/**
 * "Does the REST API accept this key?" (docs/upstream-client.md, What the REST API said of each key):
 * from the key's evidence (key-evidence.ts), else from `ask`, one fresh GET (never cached or
 * coalesced) of the smallest page of wallets, which throws as any read.
 */
export class KeyProofs {
  private readonly evidence: KeyEvidence;
  private readonly ask: (caller: Caller) => Promise<unknown>;
  /** Per key with a GET in flight: proveNow's GET, and the next one, shared by proofs asked meanwhile. */
  private readonly proofsUnderWay = new Map<
    string,
    { running: Promise<KeyProof>; next: Promise<KeyProof> | null }
  >();

  constructor(evidence: KeyEvidence, ask: (caller: Caller) => Promise<unknown>) {
    this.evidence = evidence;
    this.ask = ask;
  }

  /** From the evidence, once any call of the key under way answered (many proofs, one call); else `ask`. */
  async prove(caller: Caller): Promise<KeyProof> {
    const scope = caller.scope;
    await this.evidence.firstAnswer(scope);
    if (this.evidence.isKnownGood(scope)) return { kind: 'accepted' };
    const refusal = this.evidence.refusal(scope);
    if (refusal) return { kind: 'refused', error: refusal };
    return this.askKey(caller);
  }

  /**
   * One `ask` sent after the caller asked, whatever the evidence, except for a key refused within
   * the TTL (refused, no call); proofs asked while the key's GET is under way share the next (R5).
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
