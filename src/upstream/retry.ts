import { setTimeout as delay } from 'node:timers/promises';
import { GatewayError } from '../errors/errors.ts';
import type { Activity, Stage, UpstreamCall, UpstreamResponse } from './call.ts';
import { RETRYABLE_STATUS } from './error-mapping.ts';
import { failureOf, transportError } from './transport-errors.ts';

export interface RetryOptions {
  /** Extra attempts of a GET after a connection error or a 502/503/504. */
  maxRetries: number;
  /** Base of the full-jitter exponential backoff. */
  retryBaseDelayMs: number;
  /** A 429's Retry-After up to this long is waited out and the GET retried; longer ones are surfaced. */
  maxRetryAfterMs: number;
}

/**
 * A GET's attempts, with backoff, after a connection error or a 502/503/504, and after a 429 whose
 * Retry-After is short, while retries are left and the next fits the request's deadline. Resolves to
 * the last answer, whatever its status; a GatewayError from an attempt (budget, circuit) ends it at
 * once, and a call that got no answer rejects with its GatewayError (transport-errors.ts).
 */
export function retry(
  options: RetryOptions,
  activity: Activity,
  next: Stage,
): (call: UpstreamCall) => Promise<UpstreamResponse> {
  const sleep = async (ms: number): Promise<void> => {
    activity.timers++;
    try {
      await delay(ms);
    } finally {
      activity.timers--;
    }
  };
  const backoff = (attempt: number): Promise<void> => {
    const ceiling = options.retryBaseDelayMs * 2 ** attempt;
    return sleep(Math.random() * ceiling);
  };
  const hasTimeLeft = (deadline: number | undefined, attempt: number): boolean =>
    deadline === undefined || Date.now() + options.retryBaseDelayMs * 2 ** attempt < deadline;

  return async (call) => {
    const { deadline } = call.caller;
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= options.maxRetries || !hasTimeLeft(deadline, attempt);
      let response: UpstreamResponse;
      try {
        response = await next(call, attempt);
      } catch (error) {
        if (error instanceof GatewayError) throw error;
        if (!last && failureOf(error)?.retry) {
          await backoff(attempt);
          continue;
        }
        throw transportError(error);
      }
      if (!last && RETRYABLE_STATUS.has(response.status)) {
        await backoff(attempt);
        continue;
      }
      const wait = response.retryAfterMs;
      if (
        !last &&
        response.status === 429 &&
        wait !== undefined &&
        wait <= options.maxRetryAfterMs &&
        (deadline === undefined || Date.now() + wait < deadline)
      ) {
        await sleep(wait);
        continue;
      }
      return response;
    }
  };
}
