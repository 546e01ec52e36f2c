import type { RequestReads } from './reads.ts';

/**
 * Who an upstream call is made for: the caller's Authorization value, forwarded unchanged (the
 * gateway has no key of its own), and its scope (an HMAC of it, never the key: caller-scope.ts),
 * made by `MerchantWalletClient.caller()`; the gateway's own Callers come from src/upstream/callers.ts.
 */
export interface Caller {
  readonly authorization: string;
  readonly scope: string;
  /** Epoch ms by which every upstream call of this GraphQL request must be done (retries included). */
  readonly deadline?: number;
  /**
   * Upstream calls this GraphQL request has made (every attempt that left the gateway, retries
   * included; cache hits and coalesced waits are free) and the most it may make
   * (MAX_UPSTREAM_CALLS_PER_REQUEST). Mutable: the transport counts.
   */
  readonly calls: { made: number; readonly max: number };
  /** What this request's GETs read, and how (reads.ts): for the access log and query deduplication. */
  readonly reads: RequestReads;
  /** The GraphQL request's id, sent upstream as X-Request-Id so both sides' logs can be joined. */
  readonly requestId?: string;
}
