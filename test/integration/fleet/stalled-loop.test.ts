import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoopStalledError, RedisSilentError } from '../../../src/redis/command-bounds.ts';
import { connectRedis, type RedisClient, singleRedis } from '../../../src/redis/connection.ts';
import { RedisHealth } from '../../../src/redis/health.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { type RunningRedis, startRedis } from '../../support/redis.ts';
import { withdrawalInput } from '../../support/sandbox.ts';

/**
 * A Redis command in flight while this process's own event loop is stalled (a synchronous busy
 * wait longer than the bound): Redis answered at once, the answer waits in the socket, and no
 * timer can tell. The command must get the time it was promised, and the health must not take
 * Redis for silent. Redis that is really silent (SIGSTOP) must still be found so. No assertion
 * here is on how long anything took: each outcome is which error, or none.
 */

let redis: RunningRedis;
const connections: RedisClient[] = [];
const silent = pino({ level: 'silent' });

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  redis.resume();
  for (const connection of connections) connection.disconnect();
  await redis.close();
});

/** Blocks the event loop for `ms`, as a long synchronous task or a saturated process does. */
function stallLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

async function connect(boundMs: number): Promise<Redis> {
  const connection = (await connectRedis(singleRedis(redis.url, boundMs), silent)) as Redis;
  connections.push(connection);
  return connection;
}

/** Makes the next command sent on `client` stall the loop for `ms` right after it is written. */
function stallAfterNextCommand(client: Redis, ms: number): void {
  const internals = client as unknown as { sendCommand(command: unknown, stream?: unknown): unknown };
  const send = internals.sendCommand;
  internals.sendCommand = (command, stream) => {
    internals.sendCommand = send;
    const sent = send.call(client, command, stream);
    stallLoop(ms);
    return sent;
  };
}

describe("a command in flight while this process's event loop stalls", () => {
  it('is answered when the stall is longer than its bound', async () => {
    const connection = await connect(200);
    await connection.set('stalled-loop:a', 'answered');
    const answer = connection.get('stalled-loop:a');
    stallLoop(500);
    await expect(answer).resolves.toBe('answered');
  });

  it('is answered when the stall is longer than the connection’s silence bound (3 × the bound), on the same connection', async () => {
    const connection = await connect(100);
    await connection.set('stalled-loop:b', 'answered');
    let closed = 0;
    connection.on('close', () => closed++);
    const answer = connection.get('stalled-loop:b');
    stallLoop(800);
    await expect(answer).resolves.toBe('answered');
    expect(closed).toBe(0);
  });

  it('is answered when the stall is longer than the wall-clock allowance (3 × the bound): the socket is read before the verdict', async () => {
    const connection = await connect(100);
    const answer = connection.ping();
    stallLoop(700);
    await expect(answer).resolves.toBe('PONG');
  });

  it('leaves the health taking Redis for responsive, and its next commands are sent', async () => {
    const connection = await connect(200);
    const health = new RedisHealth(connection, silent);
    const answer = health.run(() => connection.ping());
    stallLoop(500);
    await expect(answer).resolves.toBe('PONG');
    expect(health.responsive).toBe(true);
    await expect(health.run(() => connection.ping())).resolves.toBe('PONG');
  });
});

describe('a Redis that is silent (SIGSTOP)', () => {
  it('fails the command as silence, and the health says Redis does not answer', async () => {
    const connection = await connect(500);
    const health = new RedisHealth(connection, silent);
    redis.pause();
    try {
      await expect(health.run(() => connection.ping())).rejects.toBeInstanceOf(RedisSilentError);
      expect(health.responsive).toBe(false);
    } finally {
      redis.resume();
    }
    await expect(health.check()).resolves.toBe(true);
  });

  it('is still found silent when the loop also stalls, shorter than the allowance', async () => {
    // After the stall, the bound's 500 ms of awake time fit well within the 1.5 s allowance.
    const connection = await connect(500);
    redis.pause();
    try {
      const answer = connection.ping();
      stallLoop(600);
      await expect(answer).rejects.toBeInstanceOf(RedisSilentError);
    } finally {
      redis.resume();
    }
  });

  it('past the allowance, with the loop stalled throughout, fails as the loop’s stall: the health is not told Redis is silent', async () => {
    const connection = await connect(100);
    const health = new RedisHealth(connection, silent);
    redis.pause();
    try {
      const answer = health.run(() => connection.ping());
      stallLoop(500);
      await expect(answer).rejects.toBeInstanceOf(LoopStalledError);
      expect(health.responsive).toBe(true);
    } finally {
      redis.resume();
    }
  });
});

describe('a silent Redis behind a loop that stalls past every allowance', () => {
  it('is taken for silent after three background PINGs in a row unheard that way', async () => {
    const connection = await connect(100);
    const health = new RedisHealth(connection, silent);
    redis.pause();
    try {
      for (let ping = 1; ping <= 3; ping++) {
        const checked = health.check();
        stallLoop(500);
        await checked;
        expect(health.responsive).toBe(ping < 3);
      }
    } finally {
      redis.resume();
    }
    await expect.poll(() => health.check()).toBe(true);
  });
});

describe('withdrawals after a stall with a Redis command in flight (REDIS_TIMEOUT_MS 500)', () => {
  let gw: TestGateway;
  let connection: Redis;

  beforeAll(async () => {
    connection = await connect(500);
    gw = await startTestGateway({
      config: {
        redis: singleRedis(redis.url, 500),
        // The limiter's command is each request's first in Redis, and reports to the health.
        rateLimitPerKey: { points: 10_000, durationSeconds: 60 },
      },
      infrastructure: { redis: connection },
    });
    gw.sandbox.sandbox.idempotencyExtension = false;
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('are answered, each exactly once, and replays answer the same intent', async () => {
    const merchant = await gw.sandbox.world.merchant();
    const wallet = await gw.sandbox.world.wallet(merchant.id, { USDT: '1000', TRX: '10' });
    const withdraw = (idempotencyKey: string) =>
      gw.request(
        'mutation ($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename ... on CreateWithdrawalIntentSuccess { withdrawalIntent { id } } ... on UserError { message } } }',
        { input: withdrawalInput(wallet.id, { idempotencyKey }) },
        { key: merchant.key },
      );
    const intentOf = (answer: Awaited<ReturnType<typeof withdraw>>) => {
      expect(answer.body.errors).toBeUndefined();
      const result = answer.body.data?.createWithdrawalIntent as { withdrawalIntent?: { id: string } };
      expect(result.withdrawalIntent?.id).toEqual(expect.any(String));
      return result.withdrawalIntent?.id;
    };
    gw.resetCalls();

    stallAfterNextCommand(connection, 900);
    const first = await withdraw('stalled-1');
    const following = await Promise.all(['stalled-2', 'stalled-3', 'stalled-4'].map(withdraw));
    const ids = [first, ...following].map(intentOf);
    expect(new Set(ids).size).toBe(4);
    // Each key replayed: the same intent, and nothing more sent.
    const replays = await Promise.all(['stalled-1', 'stalled-2', 'stalled-3', 'stalled-4'].map(withdraw));
    expect(replays.map(intentOf)).toEqual(ids);
    expect(gw.upstreamCalls().filter((call) => call.startsWith('POST'))).toHaveLength(4);
  });
});
