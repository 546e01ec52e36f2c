import type { RequestReads } from './reads.ts';

/**
 * Who an upstream call is for: the Authorization value, forwarded unchanged (the gateway has no key
 * of its own), and its scope. Made by `MerchantWalletClient.caller()` (callers.ts).
 */
export interface Caller {
  readonly authorization: string;
  readonly scope: string;
  /** Epoch ms by which every upstream call of this GraphQL request must be done, retries included. */
  readonly deadline?: number;
  /** Attempts that left the gateway (cache hits and joins are free) and the most allowed. */
  readonly calls: { made: number; readonly max: number };
  readonly reads: RequestReads;
  /** Sent upstream as X-Request-Id. */
  readonly requestId?: string;
}
