import type { Plugin } from 'graphql-yoga';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { authorizationOf } from '../context.ts';
import { ERROR_CODES, type ErrorCode } from '../errors/error-codes.ts';
import type { RedisClient } from '../redis/connection.ts';
import type { RedisHealth } from '../redis/health.ts';
import type { CallerScopes } from '../upstream/caller-scope.ts';
import { refusal } from './refusal.ts';

/** RATE_LIMIT_PER_KEY: `points` requests per `durationSeconds`, per API key. */
export interface RateLimit {
  points: number;
  durationSeconds: number;
}

/** What the plugin needs of a limiter: resolves to admit, rejects with a RateLimiterRes to refuse. */
export interface RateLimiter {
  readonly points: number;
  readonly duration: number;
  consume(key: string): Promise<unknown>;
}

/**
 * The limiter (rate-limiter-flexible): in Redis, shared by the fleet, when there is one; in memory
 * otherwise, and while Redis does not answer (at once while `health` knows it, else after the
 * command's bound): the fleet then admits at most its size times the limit rather than nothing.
 */
export function createRateLimiter(
  limit: RateLimit,
  redis: RedisClient | undefined,
  health?: RedisHealth,
  keyPrefix = 'mwg:rate',
): RateLimiter {
  const options = { points: limit.points, duration: limit.durationSeconds, keyPrefix };
  const local = new RateLimiterMemory(options);
  if (!redis) return local;
  const shared = new RateLimiterRedis({ ...options, storeClient: redis, rejectIfRedisNotReady: true });
  return {
    points: limit.points,
    duration: limit.durationSeconds,
    async consume(key: string) {
      if (health?.responsive === false) return local.consume(key);
      try {
        return await shared.consume(key);
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) throw rejection;
        health?.report(rejection);
        return local.consume(key);
      }
    },
  };
}

/** The refusal of a merchant's limit (RATE_LIMIT_PER_MERCHANT), worded as such. */
export class MerchantRateLimited extends RateLimiterRes {
  readonly points: number;
  readonly duration: number;

  constructor(refused: RateLimiterRes, limiter: RateLimiter) {
    super(refused.remainingPoints, refused.msBeforeNext, refused.consumedPoints, refused.isFirstInDuration);
    this.points = limiter.points;
    this.duration = limiter.duration;
  }
}

/**
 * RATE_LIMIT_PER_KEY and RATE_LIMIT_PER_MERCHANT as one limiter of caller scopes: a request is
 * counted against its key's limit, then, if admitted, against its merchant's (`groupOf`:
 * merchants.ts; a key of no known merchant is a merchant of its own). Null when neither is set.
 */
export function combinedRateLimiter(
  perKey: RateLimiter | null,
  perMerchant: RateLimiter | null,
  groupOf: (scope: string) => string,
): RateLimiter | null {
  if (!perMerchant) return perKey;
  const merchant = (scope: string) =>
    perMerchant.consume(groupOf(scope)).catch((rejection: unknown) => {
      throw rejection instanceof RateLimiterRes ? new MerchantRateLimited(rejection, perMerchant) : rejection;
    });
  return {
    points: perKey?.points ?? perMerchant.points,
    duration: perKey?.duration ?? perMerchant.duration,
    consume: (scope) => (perKey ? perKey.consume(scope).then(() => merchant(scope)) : merchant(scope)),
  };
}

/** The limiter's verdict for a Node request the hot path (src/execution/hot-path.ts) counted before handing it to Yoga. */
const consumedBefore = new WeakMap<object, Promise<unknown>>();

/** Counts one request of `scope` for the Node request `req`; Yoga's plugin takes this verdict if `req` reaches it. */
export function consumeFor(req: object, limiter: RateLimiter, scope: string): Promise<unknown> {
  const verdict = limiter.consume(scope);
  // Observed here too, so that a refusal is never an unhandled rejection if nobody else reads it.
  verdict.catch(() => undefined);
  consumedBefore.set(req, verdict);
  return verdict;
}

export interface RateLimitOptions {
  /** RATE_LIMIT_PER_KEY and RATE_LIMIT_PER_MERCHANT, per process or the fleet's (createRateLimiter). */
  limiter: RateLimiter;
  /** A key's caller scope, which the limit counts by (never the key itself). */
  scopes: Pick<CallerScopes, 'scopeOf'>;
}

/**
 * The inbound rate limit: past it, 429 with `Retry-After` and RATE_LIMITED, before parsing or any
 * REST call. Counted per caller scope (the HMAC, never the key); keyless requests are not counted.
 */
export function useRateLimit({ limiter, scopes }: RateLimitOptions): Plugin {
  return {
    onRequest({ request, endResponse, serverContext }) {
      const authorization = authorizationOf(request);
      if (!authorization) return;
      // A request the hot path handed over has been counted once already: its verdict stands.
      const counted = consumedBefore.get((serverContext as { req?: object } | undefined)?.req ?? request);
      return (counted ?? limiter.consume(scopes.scopeOf(authorization))).then(
        () => undefined,
        (rejection: unknown) => {
          // A store failure, not a verdict: the limit protects, it must not take reads down.
          if (!(rejection instanceof RateLimiterRes)) return;
          const seconds = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
          const error = {
            message:
              rejection instanceof MerchantRateLimited
                ? `Too many requests for this merchant's API keys together: at most ${rejection.points} every ${rejection.duration} s. Retry after ${seconds} s.`
                : `Too many requests for this API key: at most ${limiter.points} every ${limiter.duration} s. Retry after ${seconds} s.`,
            extensions: { code: 'RATE_LIMITED' satisfies ErrorCode, retryAfterSeconds: seconds },
          };
          endResponse(
            refusal(request, ERROR_CODES.RATE_LIMITED.status, error, { 'retry-after': String(seconds) }),
          );
        },
      );
    },
  };
}
