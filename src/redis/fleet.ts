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
 * The fleet's caller-scope secret: made by whichever process asks first (SET NX), then read by all,
 * so replicas give a key the same scope. It never leaves Redis and the gateway's memory.
 */
export async function fleetScopeSecret(redis: RedisClient, mine: Buffer = randomBytes(32)): Promise<Buffer> {
  await redis.set(SECRET_KEY, mine.toString('base64'), 'NX');
  const secret = await redis.get(SECRET_KEY);
  if (!secret) throw new Error(`${SECRET_KEY} vanished right after it was set`);
  return Buffer.from(secret, 'base64');
}

/**
 * Keeps a process on the fleet's secret after Redis lost it (docs/fleet.md): on every reconnection
 * and `checkEveryMs`, writes it back if gone (after `onDataLoss`), or adopts the one another process
 * wrote. Failures are logged; the next check retries. Returns a stop function.
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
 * Read-your-own-withdrawal across a fleet: `publish` a caller scope after its withdrawal, and every
 * process's `subscribe` ends that caller's cached reads. `publish` waits for Redis (bounded) unless
 * `health` says it does not answer; then it goes on in the background.
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

/** The event target of subscriptions in a fleet, a channel per feed; failures are logged, not thrown. */
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
     * Tells `lost` when the subscriber connection stops delivering and `restored` once it listens
     * again: a close is a loss, and 'ready' comes before ioredis subscribes again, so restored follows
     * a PING (its reply comes after the SUBSCRIBEs'); a PING every `everyMs` unanswered within
     * `timeoutMs` is a loss too. Returns a stop function.
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
