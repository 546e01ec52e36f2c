import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * The fleet's Redis (REDIS_URL). Commands fail at once while Redis is unreachable (no offline
 * queue), so a withdrawal is refused rather than held; the client reconnects by itself, forever,
 * with a capped backoff. Connection errors are logged, never thrown into the process.
 */
export async function connectRedis(url: string, logger: Logger): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: (times) => Math.min(100 * times, 2_000),
  });
  let down = false;
  redis.on('error', (error: Error) => {
    if (!down) logger.warn({ err: error.message }, 'redis unreachable; reconnecting');
    down = true;
  });
  redis.on('ready', () => {
    if (down) logger.info('redis reachable again');
    down = false;
  });
  await redis.connect();
  return redis;
}

const SECRET_KEY = 'mwg:caller-scope-secret';

/**
 * The secret every process of the fleet derives caller scopes (HMAC of the Authorization value)
 * with: made once by whichever process starts first, then read by all. Idempotency keys are
 * stored under the scope, so replicas must compute the same one. It never leaves Redis and the
 * gateway's memory, and the key itself is never stored.
 */
export async function fleetScopeSecret(redis: Redis): Promise<Buffer> {
  await redis.set(SECRET_KEY, randomBytes(32).toString('base64'), 'NX');
  const secret = await redis.get(SECRET_KEY);
  if (!secret) throw new Error(`${SECRET_KEY} vanished right after it was set`);
  return Buffer.from(secret, 'base64');
}
