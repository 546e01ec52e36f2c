import type { Plugin } from 'graphql-yoga';
import type { Redis } from 'ioredis';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { authorizationOf } from '../context.ts';
import { refusal } from './refusal.ts';

/** RATE_LIMIT_PER_KEY: `points` requests per `durationSeconds`, per API key. */
export interface RateLimit {
  points: number;
  durationSeconds: number;
}

/**
 * The limiter (rate-limiter-flexible): in Redis, shared by the fleet, when there is one; in this
 * process's memory otherwise. While Redis cannot answer, each process limits on its own (the
 * insurance limiter), so the fleet admits at most its size times the limit rather than nothing.
 */
export function createRateLimiter(limit: RateLimit, redis: Redis | undefined): RateLimiterAbstract {
  const options = { points: limit.points, duration: limit.durationSeconds, keyPrefix: 'mwg:rate' };
  if (!redis) return new RateLimiterMemory(options);
  return new RateLimiterRedis({
    ...options,
    storeClient: redis,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory(options),
  });
}

/**
 * The per-key inbound rate limit: past it, HTTP 429 with `Retry-After` and RATE_LIMITED, before the
 * request is parsed or any REST call is made. Counted per caller scope (an HMAC of the
 * Authorization value, the same on every replica), never per key. Requests without a well-formed
 * key are not counted here: they are refused with 401 without reaching the REST API anyway.
 */
export function useRateLimit(
  limiter: RateLimiterAbstract,
  scopeOf: (authorization: string) => string,
): Plugin {
  return {
    onRequest({ request, endResponse }) {
      const authorization = authorizationOf(request);
      if (!authorization) return;
      return limiter.consume(scopeOf(authorization)).then(
        () => undefined,
        (rejection: unknown) => {
          // Anything but a limiter's verdict (a store failure the insurance limiter could not
          // absorb) lets the request through: the limit protects, it must not take reads down.
          if (!(rejection instanceof RateLimiterRes)) return;
          const seconds = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
          const error = {
            message: `Too many requests for this API key: at most ${limiter.points} every ${limiter.duration} s. Retry after ${seconds} s.`,
            extensions: { code: 'RATE_LIMITED', retryAfterSeconds: seconds },
          };
          endResponse(refusal(request, 429, error, { 'retry-after': String(seconds) }));
        },
      );
    },
  };
}
