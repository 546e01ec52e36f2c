import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectRedis,
  type RedisClient,
  replicaAckTimeoutMs,
  singleRedis,
} from '../../../src/redis/connection.ts';
import { RedisHealth } from '../../../src/redis/health.ts';
import { ReplicaAckError } from '../../../src/withdrawals/idempotency-store.ts';
import { RedisIdempotencyStore } from '../../../src/withdrawals/redis-idempotency-store.ts';
import { type RunningRedis, startRedis } from '../../support/redis.ts';

/**
 * REDIS_MIN_REPLICA_ACKS against a real master and replica, the replica frozen (SIGSTOP) so that
 * it cannot acknowledge: what the store answers, and what it leaves the health believing.
 */

let master: RunningRedis;
let replica: RunningRedis;
const connections: RedisClient[] = [];
const silent = pino({ level: 'silent' });
const BOUND_MS = 2_000;

beforeAll(async () => {
  master = await startRedis();
  replica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(master.port)] });
  const probe = await connectRedis(master.url, silent);
  connections.push(probe);
  for (;;) {
    if ((await probe.info('replication')).includes('state=online')) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});
afterAll(async () => {
  replica.resume();
  for (const connection of connections) connection.disconnect();
  await replica.close();
  await master.close();
});

async function store(connectionCount: number) {
  const pool = await Promise.all(
    // A generous bound: the test is about what is answered, not how fast, on a busy machine.
    Array.from({ length: connectionCount }, () => connectRedis(singleRedis(master.url, BOUND_MS), silent)),
  );
  connections.push(...pool);
  const health = new RedisHealth(pool[0] as RedisClient, silent);
  const ackStore = new RedisIdempotencyStore(pool, {
    maxKeysPerCaller: 1000,
    minReplicaAcks: 1,
    ackTimeoutMs: replicaAckTimeoutMs({ timeoutMs: BOUND_MS }),
    health,
  });
  return { store: ackStore, health };
}

/** Runs `write` until a replica acknowledges it (the resumed replica catches up first), for 10 s at most. */
async function acknowledged<T>(write: () => Promise<T>): Promise<T> {
  const giveUpAt = Date.now() + 10_000;
  for (;;) {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof ReplicaAckError) || Date.now() > giveUpAt) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

const attempt = () => ({
  id: randomUUID(),
  owner: 'k:scope:key',
  sentAt: Date.now(),
  endsBy: Date.now() + 1_000,
  endedAt: null,
});

describe('a replica that cannot acknowledge', () => {
  it('an intent claim is refused, and so is its retry, though the master already holds it', async () => {
    const { store: s } = await store(1);
    const intentId = randomUUID();
    replica.pause();
    try {
      await expect(s.claimIntent(intentId, 'owner-a')).rejects.toBeInstanceOf(ReplicaAckError);
      // The master holds the claim now; the retry must still wait for a replica to hold it.
      await expect(s.claimIntent(intentId, 'owner-a')).rejects.toBeInstanceOf(ReplicaAckError);
    } finally {
      replica.resume();
    }
    await expect(s.claimIntent(intentId, 'owner-a')).resolves.toBeNull();
    expect(await acknowledged(() => s.claimIntent(intentId, 'owner-b'))).toBe('owner-a');
  });

  it('concurrent writes are each refused, and Redis is not taken for one that does not answer', async () => {
    const { store: s, health } = await store(4);
    replica.pause();
    let outcomes: PromiseSettledResult<void>[];
    try {
      outcomes = await Promise.allSettled(
        Array.from({ length: 8 }, () => s.putSubmission('payout', attempt())),
      );
    } finally {
      replica.resume();
    }
    expect(outcomes.every((outcome) => outcome.status === 'rejected')).toBe(true);
    // Four at a time get their WAIT's answer; the others queued behind them time out. Neither
    // says Redis stopped answering: the health (reads, rate limits, leases) stays as it was.
    const acks = outcomes.filter(
      (outcome) => outcome.status === 'rejected' && outcome.reason instanceof ReplicaAckError,
    );
    expect(acks.length).toBeGreaterThanOrEqual(4);
    expect(health.responsive).toBe(true);
    await acknowledged(() => s.putSubmission('payout', attempt()));
  });
});
