import {
  type CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  circuitBreaker,
  handleWhen,
} from 'cockatiel';
import { GatewayError } from '../errors/errors.ts';
import type { Stage, UpstreamObserver } from './call.ts';
import { RETRYABLE_STATUS } from './error-mapping.ts';
import { failureOf } from './transport-errors.ts';

/**
 * Circuit breakers on the REST API, one per route template (`GET /deposits/{id}`,
 * `POST /withdrawal-intents`, …), from cockatiel. After `failures` consecutive failed attempts on a
 * route (502/503/504 answers, timeouts, resets, refused connections) its circuit opens: calls on
 * that route fail at once with UPSTREAM_UNAVAILABLE and `retryAfterSeconds`, without reaching the
 * REST API. After `halfOpenAfterMs` one call goes through as a probe; its success closes the
 * circuit, its failure opens it again. While the probe is out, other calls on the route fail fast
 * too (cockatiel would queue them behind it). Every attempt passes here, retries included, so
 * retries stop as soon as a circuit opens and never multiply load on it.
 *
 * A 4xx, a 500 and the GraphQL request's own deadline are not the REST API struggling, and do not
 * count. One breaker per template, shared by every caller: the REST API's health is the same for
 * all merchants.
 */

export interface CircuitBreakerOptions {
  /** Consecutive failed attempts that open a route's circuit; 0 turns the breakers off. */
  failures: number;
  /** How long an open circuit refuses calls before it lets a probe through. */
  halfOpenAfterMs: number;
}

export type CircuitStateName = 'closed' | 'open' | 'half-open';

interface Breaker {
  policy: CircuitBreakerPolicy;
  /** When the circuit last opened (epoch ms). */
  openedAt: number;
}

export class CircuitBreakers {
  private readonly options: CircuitBreakerOptions;
  private readonly breakers = new Map<string, Breaker>();

  constructor(options: CircuitBreakerOptions) {
    this.options = options;
  }

  /**
   * Runs one attempt on `route` through its breaker. Throws a GatewayError (UPSTREAM_UNAVAILABLE,
   * `circuit: "open"`, `retryAfterSeconds`) without calling `attempt` when the circuit is open or
   * its probe is out; otherwise returns or throws what the attempt did.
   */
  async run<T extends { status: number }>(route: string, attempt: () => Promise<T>): Promise<T> {
    if (this.options.failures <= 0) return attempt();
    const breaker = this.breaker(route);
    const { state } = breaker.policy;
    if (state === CircuitState.HalfOpen || (state === CircuitState.Open && this.retryAfterMs(breaker) > 0)) {
      throw circuitOpen(route, this.retryAfterMs(breaker));
    }
    try {
      return await breaker.policy.execute(attempt);
    } catch (error) {
      // Raced with another call that opened the circuit between the check above and execute().
      if ((error as { isBrokenCircuitError?: boolean }).isBrokenCircuitError) {
        throw circuitOpen(route, this.retryAfterMs(breaker));
      }
      throw error;
    }
  }

  /** Each route's circuit state, for health and metrics. */
  states(): Record<string, CircuitStateName> {
    const states: Record<string, CircuitStateName> = {};
    for (const [route, { policy }] of this.breakers) states[route] = stateName(policy.state);
    return states;
  }

  private retryAfterMs(breaker: Breaker): number {
    return Math.max(0, breaker.openedAt + this.options.halfOpenAfterMs - Date.now());
  }

  private breaker(route: string): Breaker {
    let breaker = this.breakers.get(route);
    if (!breaker) {
      const policy = circuitBreaker(
        // Transport failures count when transport-errors.ts says so: no answer in time, or at all.
        handleWhen((error) => failureOf(error)?.circuit === true).orWhenResult((result) =>
          RETRYABLE_STATUS.has((result as { status: number }).status),
        ),
        {
          halfOpenAfter: this.options.halfOpenAfterMs,
          breaker: new ConsecutiveBreaker(this.options.failures),
        },
      );
      const created: Breaker = { policy, openedAt: 0 };
      policy.onBreak(() => {
        created.openedAt = Date.now();
      });
      this.breakers.set(route, created);
      breaker = created;
    }
    return breaker;
  }
}

/**
 * The transport's stage after the call budget's check: each attempt through its route's breaker.
 * An attempt the circuit refuses never leaves the gateway: `next` is not called (so the attempt is
 * not spent from the budget), and it is reported as refused ('circuit_open').
 */
export function circuit(
  breakers: CircuitBreakers,
  observer: UpstreamObserver | undefined,
  next: Stage,
): Stage {
  return async (call, attempt) => {
    let sent = false;
    try {
      return await breakers.run(call.route.route, () => {
        sent = true;
        return next(call, attempt);
      });
    } catch (error) {
      if (!sent) observer?.refused(call.route.method, call.route.template, 'circuit_open');
      throw error;
    }
  };
}

function stateName(state: CircuitState): CircuitStateName {
  if (state === CircuitState.Closed) return 'closed';
  if (state === CircuitState.HalfOpen) return 'half-open';
  return 'open';
}

/** The call was not made: its route's circuit is open. Carries when to try again. */
function circuitOpen(route: string, retryAfterMs: number): GatewayError {
  return new GatewayError(
    'UPSTREAM_UNAVAILABLE',
    `The REST API is failing on ${route}; the gateway is not calling it for now. Retry later.`,
    { extensions: { circuit: 'open', retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) } },
  );
}
