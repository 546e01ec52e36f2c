import { randomBytes } from 'node:crypto';
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
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

/**
 * Warns when Redis may evict keys: every key the gateway writes has a TTL, so any policy but
 * `noeviction` could drop an idempotency record or a claim under memory pressure, and one key could
 * then make two withdrawals. With `noeviction` a full Redis refuses the write instead, and the
 * withdrawal is refused unsent. Managed Redis services may refuse CONFIG; then nothing is said.
 */
export async function warnIfRedisEvicts(redis: Redis, logger: Logger): Promise<void> {
  const reply = (await redis.config('GET', 'maxmemory-policy').catch(() => null)) as string[] | null;
  const policy = reply?.[1];
  if (policy && policy !== 'noeviction') {
    logger.warn(
      { maxmemoryPolicy: policy },
      'redis may evict idempotency records under memory pressure; set maxmemory-policy noeviction',
    );
  }
}

const SECRET_KEY = 'mwg:caller-scope-secret';

/**
 * The secret every process of the fleet derives caller scopes (HMAC of the Authorization value)
 * with: made once by whichever process starts first, then read by all. Idempotency keys are
 * stored under the scope, so replicas must compute the same one. It never leaves Redis and the
 * gateway's memory, and the key itself is never stored. Keep it with keepFleetScopeSecret.
 */
export async function fleetScopeSecret(redis: Redis, mine: Buffer = randomBytes(32)): Promise<Buffer> {
  await redis.set(SECRET_KEY, mine.toString('base64'), 'NX');
  const secret = await redis.get(SECRET_KEY);
  if (!secret) throw new Error(`${SECRET_KEY} vanished right after it was set`);
  return Buffer.from(secret, 'base64');
}

/**
 * Keeps a process on the fleet's scope secret after Redis lost it (a restart without persistence,
 * a failover to a replica that lacked it, a flush). Otherwise the processes running on would keep
 * the old secret while a process started afterwards made a new one, and one idempotency key would
 * be claimed under two scopes: two withdrawals for one key. On every reconnection and every
 * `checkEveryMs`, the process writes its secret back if the key is missing (so records under it
 * stay reachable when only the key went), and adopts the one Redis holds if another process wrote
 * first, and calls `onDataLoss` (the idempotency store marks that its claims before now are
 * gone). Failures are logged; the next check tries again. Returns a stop function.
 */
export function keepFleetScopeSecret(
  redis: Redis,
  secret: Buffer,
  adopt: (secret: Buffer) => void,
  logger: Logger,
  checkEveryMs = 30_000,
  onDataLoss: () => Promise<void> = async () => {},
): () => void {
  let current = secret;
  let checking = false;
  const check = async () => {
    if (checking) return;
    checking = true;
    try {
      // The secret gone means Redis lost its data: say so before anything else is written.
      if ((await redis.exists(SECRET_KEY)) === 0) {
        logger.warn('redis lost the fleet data (the scope secret was gone); writing it back');
        await onDataLoss();
      }
      const held = await fleetScopeSecret(redis, current);
      if (!held.equals(current)) {
        logger.warn('the fleet scope secret in Redis changed (Redis lost it?); this process adopts it');
        current = held;
        adopt(held);
      }
    } catch (error) {
      logger.debug({ err: (error as Error).message }, 'fleet scope secret check failed');
    } finally {
      checking = false;
    }
  };
  const onReady = () => void check();
  redis.on('ready', onReady);
  const timer = setInterval(onReady, checkEveryMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    redis.off('ready', onReady);
  };
}

const INVALIDATE_CHANNEL = 'mwg:invalidate';

/**
 * Read-your-own-withdrawal across a fleet: after a withdrawal succeeds on one process, every
 * process forgets that caller's cached reads and query-deduplication generation. `publish` goes in
 * the client's `onWithdrawal` (awaited before the withdrawal answers, so the message is in Redis
 * before the client can read again); `subscribe` applies the others' messages. Messages carry the
 * caller scope (an HMAC), never a key. A message lost while Redis is down only leaves reads up to
 * UPSTREAM_CACHE_TTL_MS stale.
 */
export function fleetInvalidation(redis: Redis, logger: Logger) {
  return {
    async publish(scope: string): Promise<void> {
      await redis.publish(INVALIDATE_CHANNEL, scope);
    },
    /** Starts applying the fleet's invalidations; returns the subscriber connection, to quit on shutdown. */
    async subscribe(invalidate: (scope: string) => void): Promise<Redis> {
      const subscriber = redis.duplicate({ enableOfflineQueue: true });
      subscriber.on('error', (error: Error) =>
        logger.debug({ err: error.message }, 'redis subscriber error'),
      );
      subscriber.on('message', (channel: string, scope: string) => {
        if (channel === INVALIDATE_CHANNEL) invalidate(scope);
      });
      await subscriber.subscribe(INVALIDATE_CHANNEL);
      return subscriber;
    },
  };
}

/**
 * The event target subscriptions publish on in a fleet (@graphql-yoga/redis-event-target): the
 * replica polling a feed publishes to Redis, and every replica, itself included, hands what Redis
 * brings to its own subscribers. Channels are named by feed (a caller scope, never a key). A
 * publish or subscribe that fails while Redis is down is logged, never thrown into the process;
 * ioredis subscribes again by itself when it reconnects.
 */
export function fleetEvents(redis: Redis, logger: Logger) {
  const subscriber = redis.duplicate({ enableOfflineQueue: true });
  subscriber.on('error', (error: Error) => logger.debug({ err: error.message }, 'redis subscriber error'));
  const failed = (what: string) => (error: Error) =>
    logger.warn({ err: error.message }, `subscription ${what} through redis failed`);
  const events = createRedisEventTarget({
    publishClient: {
      publish: (channel: string, message: string) => redis.publish(channel, message).catch(failed('publish')),
    } as unknown as Redis,
    subscribeClient: {
      on: (event: string, listener: (...args: unknown[]) => void) => subscriber.on(event, listener),
      subscribe: (channel: string) => subscriber.subscribe(channel).catch(failed('subscribe')),
      unsubscribe: (channel: string) => subscriber.unsubscribe(channel).catch(failed('unsubscribe')),
    } as unknown as Redis,
  });
  return {
    events,
    subscriber,
    /**
     * Tells `lost` when the subscriber connection closes (news published meanwhile never arrives)
     * and `restored` once it listens again: ioredis says 'ready' before it subscribes again, so
     * after a PING, whose reply follows those of the SUBSCRIBEs.
     */
    watchDelivery(handlers: { lost(): void; restored(): void }): void {
      subscriber.on('close', handlers.lost);
      subscriber.on('ready', () => {
        subscriber.ping().then(handlers.restored, (error: Error) => {
          logger.debug({ err: error.message }, 'redis subscriber ping failed');
        });
      });
    },
  };
}
