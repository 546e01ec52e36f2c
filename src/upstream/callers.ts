import type { Caller } from './caller.ts';
import type { MerchantWalletClient } from './client.ts';

/**
 * Who each piece of work calls the REST API as, with its deadline and call budget: the one place
 * that turns REQUEST_DEADLINE_MS and MAX_UPSTREAM_CALLS_PER_REQUEST into a Caller. Built once by
 * the runtime (src/runtime.ts) and handed to whatever makes REST calls on a key's behalf.
 */
export interface Callers {
  /** REQUEST_DEADLINE_MS: the time one request has for all its REST calls, retries included. */
  readonly requestDeadlineMs: number;
  /**
   * A GraphQL request, an event of a subscription, or a poll of a feed: each is a request of its
   * own, with REQUEST_DEADLINE_MS from now and MAX_UPSTREAM_CALLS_PER_REQUEST calls.
   */
  forRequest(authorization: string, requestId?: string): Caller;
  /**
   * One REST call made on a key's behalf outside any request (a step of a wallet index build, the
   * proof of a WebSocket's key): `withinMs` from now (default REQUEST_DEADLINE_MS), one call.
   */
  forOneCall(authorization: string, withinMs?: number): Caller;
}

export function createCallers(
  client: Pick<MerchantWalletClient, 'caller'>,
  limits: { requestDeadlineMs: number; maxUpstreamCallsPerRequest: number },
): Callers {
  const { requestDeadlineMs, maxUpstreamCallsPerRequest } = limits;
  return {
    requestDeadlineMs,
    forRequest: (authorization, requestId) =>
      client.caller(authorization, {
        deadline: Date.now() + requestDeadlineMs,
        maxCalls: maxUpstreamCallsPerRequest,
        ...(requestId !== undefined && { requestId }),
      }),
    forOneCall: (authorization, withinMs = requestDeadlineMs) =>
      client.caller(authorization, { deadline: Date.now() + withinMs, maxCalls: 1 }),
  };
}
