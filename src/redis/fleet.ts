import { randomBytes } from 'node:crypto';
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { loopStalls, StallAwareTimer } from '../shared/loop-stalls.ts';
import { STALL_ALLOWANCE } from './command-bounds.ts';
import { type RedisClient, subscriberClient } from './connection.ts';
import type { RedisHealth } from './health.ts';

const SECRET_KEY = 'mwg:caller-scope-secret';
/** A subscriber PING unheard because this process stalled: neither lost nor restored. */
const NO_VERDICT = new Error('unheard through an event-loop stall');

/**
 * The secret every process of the fleet derives caller scopes (HMAC of the Authorization value)
 * with: made once by whichever process starts first, then read by all. Idempotency keys are
 * stored under the scope, so replicas must compute the same one. It never leaves Redis and the
 * gateway's memory, and the key itself is never stored. Keep it with keepFleetScopeSecret.
 */
export async function fleetScopeSecret(redis: RedisClient, mine: Buffer = randomBytes(32)): Promise<Buffer> {
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
  redis: RedisClient,
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
 * the client's `onWithdrawal`; `subscribe` applies the others' messages. Messages carry the caller
 * scope (an HMAC), never a key.
 *
 * While Redis answers, the withdrawal's answer waits for the publish (at most REDIS_TIMEOUT_MS of running time: command-bounds.ts),
 * so the message is in Redis before the client can read again on another replica. While `health`
 * says Redis does not answer, the answer does not wait: the publish goes on in the background and
 * lands if Redis comes back. A message lost that way only leaves that caller's reads on other
 * replicas up to UPSTREAM_CACHE_TTL_MS stale; subscriptions catch up by themselves.
 */
export function fleetInvalidation(redis: RedisClient, logger: Logger, health?: RedisHealth) {
  return {
    async publish(scope: string): Promise<void> {
      const sent = redis.publish(INVALIDATE_CHANNEL, scope).catch((error: Error) => {
        health?.report(error);
        logger.debug({ err: error.message }, 'withdrawal notice not published');
      });
      if (health?.responsive !== false) await sent;
    },
    /** Starts applying the fleet's invalidations; returns the subscriber connection, to quit on shutdown. */
    async subscribe(invalidate: (scope: string) => void): Promise<RedisClient> {
      const subscriber = subscriberClient(redis);
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
export function fleetEvents(redis: RedisClient, logger: Logger) {
  const subscriber = subscriberClient(redis);
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
     * Tells `lost` when the subscriber connection stops delivering (news published meanwhile never
     * arrives) and `restored` once it listens again:
     * - a closed connection is lost at once; ioredis says 'ready' before it subscribes again, so
     *   it is restored after a PING, whose reply follows those of the SUBSCRIBEs;
     * - a Redis that hangs keeps the connection open and silent: a PING every `everyMs` that is
     *   not answered within `timeoutMs` (REDIS_TIMEOUT_MS) counts as lost, and the next answered
     *   one as restored.
     * Returns a stop function.
     */
    watchDelivery(
      handlers: { lost(): void; restored(): void },
      timeoutMs: number,
      everyMs = 1_000,
    ): () => void {
      let delivering = true;
      const lost = () => {
        delivering = false;
        handlers.lost();
      };
      const ping = () => {
        // Bounded on the loop's awake clock: a PING unheard because this process stalled is no loss.
        let timer: StallAwareTimer | undefined;
        const unanswered = new Promise<never>((_, reject) => {
          timer = new StallAwareTimer(loopStalls(), timeoutMs, timeoutMs * STALL_ALLOWANCE, (expiry) => {
            // Unheard through a stall is no verdict either way: the next PING judges.
            reject(expiry.kind === 'silent' ? new Error(`no PONG within ${timeoutMs} ms`) : NO_VERDICT);
          }).unref();
        });
        return Promise.race([subscriber.ping(), unanswered]).then(
          () => {
            timer?.cancel();
            if (delivering) return;
            delivering = true;
            handlers.restored();
          },
          (error: Error) => {
            timer?.cancel();
            if (error === NO_VERDICT) return;
            logger.debug({ err: error.message }, 'redis subscriber ping failed');
            if (delivering) lost();
          },
        );
      };
      subscriber.on('close', lost);
      subscriber.on('ready', () => void ping());
      const timer = setInterval(() => {
        if (subscriber.status === 'ready') void ping();
      }, everyMs);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
}
