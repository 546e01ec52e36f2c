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
 * One cockatiel circuit breaker per route template, shared by every caller. `failures` failed
 * attempts in a row (no answer, in time or at all, or a 502/503/504) open the route's circuit: its
 * calls then fail at once with UPSTREAM_UNAVAILABLE and `retryAfterSeconds`; after
 * `halfOpenAfterMs` one probe decides, and calls during it fail fast too.
 * docs/upstream-client.md#failure-behaviour.
 */

export interface CircuitBreakerOptions {
  /** 0 turns the breakers off. */
  failures: number;
  halfOpenAfterMs: number;
}

export type CircuitStateName = 'closed' | 'open' | 'half-open';

interface Breaker {
  policy: CircuitBreakerPolicy;
  /** Epoch ms. */
  openedAt: number;
}

export class CircuitBreakers {
  private readonly options: CircuitBreakerOptions;
  private readonly breakers = new Map<string, Breaker>();

  constructor(options: CircuitBreakerOptions) {
    this.options = options;
  }

  /** Runs `attempt` through the route's breaker; throws, unsent, while the circuit is open or probing. */
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
      // Another call opened the circuit between the check above and execute().
      if ((error as { isBrokenCircuitError?: boolean }).isBrokenCircuitError) {
        throw circuitOpen(route, this.retryAfterMs(breaker));
      }
      throw error;
    }
  }

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

/** The stage after the budget's check: an attempt the circuit refuses is unsent, unspent, reported. */
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

function circuitOpen(route: string, retryAfterMs: number): GatewayError {
  return new GatewayError(
    'UPSTREAM_UNAVAILABLE',
    `The REST API is failing on ${route}; the gateway is not calling it for now. Retry later.`,
    { extensions: { circuit: 'open', retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) } },
  );
}
