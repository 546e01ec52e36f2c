import { createSchema, createYoga } from 'graphql-yoga';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { describe, expect, it } from 'vitest';
import {
  combinedRateLimiter,
  consumeFor,
  createRateLimiter,
  type RateLimiter,
  useRateLimit,
} from '../../../src/plugins/rate-limit.ts';
import { refusalCodeOf } from '../../../src/plugins/refusal.ts';
import type { RedisClient } from '../../../src/redis/connection.ts';
import type { RedisHealth } from '../../../src/redis/health.ts';
import { CallerScopes } from '../../../src/upstream/caller-scope.ts';

const KEY = 'Bearer mw_test_rate_one';
const OTHER_KEY = 'Bearer mw_test_rate_two';

/** A limiter that records what it counts and answers as told. */
function scriptedLimiter(verdict: (scope: string) => Promise<unknown>): RateLimiter & { counted: string[] } {
  const counted: string[] = [];
  return {
    points: 5,
    duration: 60,
    counted,
    consume(scope) {
      counted.push(scope);
      return verdict(scope);
    },
  };
}

function gateway(limiter: RateLimiter, scopes = new CallerScopes(Buffer.alloc(32, 1))) {
  let executed = 0;
  const codes: (string | undefined)[] = [];
  // The server context of a Node request: `req`, which the hot path may have counted already.
  const yoga = createYoga<{ req?: object }>({
    schema: createSchema({
      typeDefs: 'type Query { greeting: String! }',
      resolvers: {
        Query: {
          greeting: () => {
            executed++;
            return 'hi';
          },
        },
      },
    }),
    logging: false,
    plugins: [
      useRateLimit({ limiter, scopes }),
      {
        onResponse({ request }) {
          codes.push(refusalCodeOf(request));
        },
      },
    ],
  });
  const get = (authorization?: string, serverContext?: { req: object }) =>
    yoga.fetch(
      'http://yoga/graphql?query=%7Bgreeting%7D',
      { headers: authorization ? { authorization } : {} },
      serverContext ?? {},
    );
  return { get, executed: () => executed, codes, scopes };
}

const refused = (msBeforeNext: number) => Promise.reject(new RateLimiterRes(0, msBeforeNext, 6, false));

describe('useRateLimit', () => {
  it('counts each request against its caller scope, never its key, and answers it while admitted', async () => {
    const limiter = scriptedLimiter(async () => undefined);
    const g = gateway(limiter);
    const response = await g.get(KEY);
    expect(await response.json()).toEqual({ data: { greeting: 'hi' } });
    await g.get(KEY);
    await g.get(OTHER_KEY);
    const scope = g.scopes.scopeOf(KEY);
    expect(limiter.counted).toEqual([scope, scope, g.scopes.scopeOf(OTHER_KEY)]);
    expect(limiter.counted.join()).not.toContain('mw_test_rate');
  });

  it('refuses past the limit with 429, Retry-After and RATE_LIMITED, before GraphQL runs', async () => {
    const g = gateway(scriptedLimiter(() => refused(1_500)));
    const response = await g.get(KEY);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('2');
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toEqual({
      errors: [
        {
          message: 'Too many requests for this API key: at most 5 every 60 s. Retry after 2 s.',
          extensions: { code: 'RATE_LIMITED', retryAfterSeconds: 2 },
        },
      ],
    });
    expect(g.executed()).toBe(0);
    expect(g.codes).toEqual(['RATE_LIMITED']);
  });

  it('never answers a Retry-After under 1 s', async () => {
    const response = await gateway(scriptedLimiter(() => refused(0))).get(KEY);
    expect(response.headers.get('retry-after')).toBe('1');
    expect((await response.json()).errors[0].extensions.retryAfterSeconds).toBe(1);
  });

  it('does not count requests without a well-formed key: they are refused with 401 elsewhere', async () => {
    const limiter = scriptedLimiter(() => refused(1_000));
    const g = gateway(limiter);
    for (const authorization of [undefined, 'Basic dXNlcjpwYXNz', 'Bearer ', 'Bearer a b']) {
      expect((await g.get(authorization)).status, String(authorization)).toBe(200);
    }
    expect(limiter.counted).toEqual([]);
  });

  it('lets a request through when the limiter fails rather than refusing', async () => {
    const g = gateway(scriptedLimiter(() => Promise.reject(new Error('store down'))));
    const response = await g.get(KEY);
    expect(await response.json()).toEqual({ data: { greeting: 'hi' } });
  });

  it("takes the hot path's verdict for a Node request it counted already, and counts it no second time", async () => {
    const limiter = scriptedLimiter(() => refused(3_000));
    const g = gateway(limiter);
    const req = {};
    const verdict = consumeFor(req, limiter, g.scopes.scopeOf(KEY));
    await expect(verdict).rejects.toBeInstanceOf(RateLimiterRes);
    const response = await g.get(KEY, { req });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(limiter.counted).toHaveLength(1);
    // Another Node request is counted afresh.
    await g.get(KEY, { req: {} });
    expect(limiter.counted).toHaveLength(2);
  });

  it("with the process's own limiter, refuses the key's request past its points, and no other key's", async () => {
    const g = gateway(
      createRateLimiter({ points: 2, durationSeconds: 60 }, undefined, undefined, 'test:one'),
    );
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await g.get(KEY)).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect((await g.get(OTHER_KEY)).status).toBe(200);
    const refusedOne = await g.get(KEY);
    expect(Number(refusedOne.headers.get('retry-after'))).toBeGreaterThanOrEqual(59);
    expect(Number(refusedOne.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  });

  it("words a merchant's limit as such (RATE_LIMIT_PER_MERCHANT), counted by the merchant of each key", async () => {
    const perKey = scriptedLimiter(async () => undefined);
    const perMerchant = scriptedLimiter((merchant) =>
      merchant === 'acme' ? refused(4_000) : Promise.resolve(),
    );
    const scopes = new CallerScopes(Buffer.alloc(32, 2));
    const merchantOf = new Map([[scopes.scopeOf(KEY), 'acme']]);
    const limiter = combinedRateLimiter(perKey, perMerchant, (scope) => merchantOf.get(scope) ?? scope);
    const g = gateway(limiter as RateLimiter, scopes);
    const response = await g.get(KEY);
    expect(response.status).toBe(429);
    expect(await response.json()).toEqual({
      errors: [
        {
          message:
            "Too many requests for this merchant's API keys together: at most 5 every 60 s. Retry after 4 s.",
          extensions: { code: 'RATE_LIMITED', retryAfterSeconds: 4 },
        },
      ],
    });
    expect((await g.get(OTHER_KEY)).status).toBe(200);
    // The key's own limit first, then its merchant's: a key of no known merchant is its own.
    expect(perKey.counted).toEqual([scopes.scopeOf(KEY), scopes.scopeOf(OTHER_KEY)]);
    expect(perMerchant.counted).toEqual(['acme', scopes.scopeOf(OTHER_KEY)]);
  });
});

describe('combinedRateLimiter', () => {
  it('is the per-key limiter alone, or null, without a merchant limit', () => {
    const perKey = scriptedLimiter(async () => undefined);
    expect(combinedRateLimiter(perKey, null, (s) => s)).toBe(perKey);
    expect(combinedRateLimiter(null, null, (s) => s)).toBeNull();
  });

  it('does not count the merchant when the key itself is refused', async () => {
    const perKey = scriptedLimiter(() => refused(1_000));
    const perMerchant = scriptedLimiter(async () => undefined);
    const limiter = combinedRateLimiter(perKey, perMerchant, () => 'acme');
    await expect(limiter?.consume('scope')).rejects.toBeInstanceOf(RateLimiterRes);
    expect(perMerchant.counted).toEqual([]);
  });
});

describe('createRateLimiter', () => {
  /** An ioredis client that is not connected: the shared limiter refuses to use it. */
  const notReady = { status: 'connecting' } as unknown as RedisClient;

  it("limits in this process's memory while Redis does not answer, and reports it", async () => {
    const reports: unknown[] = [];
    const health = { responsive: true, report: (error: unknown) => reports.push(error) };
    const limiter = createRateLimiter(
      { points: 1, durationSeconds: 60 },
      notReady,
      health as unknown as RedisHealth,
      'test:two',
    );
    await expect(limiter.consume('scope')).resolves.toBeDefined();
    await expect(limiter.consume('scope')).rejects.toBeInstanceOf(RateLimiterRes);
    expect(reports).toHaveLength(2);
  });

  it('goes straight to memory while health knows Redis is unresponsive', async () => {
    const reports: unknown[] = [];
    const health = { responsive: false, report: (error: unknown) => reports.push(error) };
    const limiter = createRateLimiter(
      { points: 1, durationSeconds: 60 },
      notReady,
      health as unknown as RedisHealth,
      'test:three',
    );
    await limiter.consume('scope');
    await expect(limiter.consume('scope')).rejects.toBeInstanceOf(RateLimiterRes);
    expect(reports).toEqual([]);
    expect([limiter.points, limiter.duration]).toEqual([1, 60]);
  });
});
