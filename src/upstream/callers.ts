import type { Caller } from './caller.ts';
import type { MerchantWalletClient } from './client.ts';

/** The one place that turns REQUEST_DEADLINE_MS and MAX_UPSTREAM_CALLS_PER_REQUEST into a Caller. */
export interface Callers {
  readonly requestDeadlineMs: number;
  /** A GraphQL request, a subscription event or a poll: a deadline from now and the full call budget. */
  forRequest(authorization: string, requestId?: string): Caller;
  /** One call outside any request (an index build step, a WebSocket's key proof): `withinMs` from now. */
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
