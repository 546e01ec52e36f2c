import { GatewayError } from '../errors.ts';
import type { Attempt } from './call.ts';
import type { UpstreamObserver } from './telemetry.ts';

/**
 * The request's call budget (Caller.calls, MAX_UPSTREAM_CALLS_PER_REQUEST), in two parts around
 * the circuit: `budget` refuses an attempt once the request has made as many calls as it may;
 * `spend` counts one that is about to leave. An attempt the circuit refuses never left, so it is
 * not spent.
 */

/** Refuses the attempt (QUERY_LIMIT_EXCEEDED, reported as refused: 'budget') when the budget is spent. */
export function budget(observer: UpstreamObserver | undefined, next: Attempt): Attempt {
  return (call, attempt) => {
    const { calls } = call.caller;
    if (calls.made < calls.max) return next(call, attempt);
    observer?.refused(call.route.method, call.route.template, 'budget');
    return Promise.reject(budgetSpent(calls.max));
  };
}

/** Counts the attempt against the request's budget. */
export function spend(next: Attempt): Attempt {
  return (call, attempt) => {
    call.caller.calls.made++;
    return next(call, attempt);
  };
}

/** The request has made as many upstream calls as one request may: the rest of its fields fail. */
function budgetSpent(max: number): GatewayError {
  return new GatewayError(
    'QUERY_LIMIT_EXCEEDED',
    `This request needed more than ${max} calls to the REST API, the most one request may make. Ask for fewer items or split the query.`,
    { extensions: { maxUpstreamCalls: max } },
  );
}
