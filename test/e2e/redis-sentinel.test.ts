import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventually, type GatewayProcess, startGatewayProcess } from '../support/fleet-process.ts';
import { type SentinelTopology, startSentinelTopology } from '../support/redis.ts';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.ts';
import { subscribeSSE } from '../support/subscriptions.ts';
import { recordSuiteKey } from '../support/suite-logs.ts';

/**
 * The fleet on Redis Sentinel, configured by name only (REDIS_SENTINELS, REDIS_SENTINEL_MASTER;
 * REDIS_MIN_REPLICA_ACKS left at its Sentinel default of 1): real redis-server processes, a master
 * and two replicas watched by a Sentinel, and two gateway processes in front of a REST API that
 * does not deduplicate. The master is killed for real; nothing is restarted. POSTs are counted at
 * the sandbox.
 */

let topology: SentinelTopology;
let sandbox: TestSandbox;
let a: GatewayProcess;
let b: GatewayProcess;
let key: string;
let walletId: string;

beforeAll(async () => {
  topology = await startSentinelTopology();
  sandbox = await startTestSandbox();
  sandbox.sandbox.idempotencyExtension = false;
  const env = {
    REDIS_SENTINELS: `127.0.0.1:${topology.sentinelPort}`,
    REDIS_SENTINEL_MASTER: topology.name,
    // Replica acks wait 60% of this: room for the redis-servers sharing a busy machine.
    REDIS_TIMEOUT_MS: '2000',
  };
  [a, b] = await Promise.all([
    startGatewayProcess(sandbox.url, env),
    // B keeps its cached reads a minute: only A's notice can make it read again within a test.
    startGatewayProcess(sandbox.url, { ...env, UPSTREAM_CACHE_TTL_MS: '60000' }),
  ]);
  const merchant = await sandbox.world.merchant();
  key = merchant.key;
  recordSuiteKey(key);
  walletId = (await sandbox.world.wallet(merchant.id, { USDT: '100000', TRX: '10' })).id;
});
afterAll(async () => {
  a?.stop('gateway A, Sentinel');
  b?.stop('gateway B, Sentinel');
  await sandbox?.close();
  await topology?.close();
});
beforeEach(() => {
  sandbox.sandbox.requests.length = 0;
});
const posts = () => sandbox.sandbox.requests.filter((r) => r.method === 'POST').length;

describe('Redis Sentinel', () => {
  it('one key over two gateways: one POST', async () => {
    const idempotencyKey = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).withdraw(key, walletId, { idempotencyKey })),
    );
    const ids = new Set(answers.map((answer) => answer.intentId));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toBeDefined();
    expect(posts()).toBe(1);
  });

  it('read-your-writes across gateways: a withdrawal made on A is in the next list read on B', async () => {
    // B has the list in its micro-cache now; A's notice through Redis must make B read again.
    await b.newestWithdrawal(key);
    const made = await a.withdraw(key, walletId, { idempotencyKey: randomUUID() });
    // A's publish is in Redis before A answers; B may read its socket a moment later. A B never
    // told keeps its cached list far longer than this wait, so it still fails.
    await eventually(
      'B to list the withdrawal made on A',
      async () => (await b.newestWithdrawal(key)) === made.intentId,
      10_000,
    );
    expect(await b.newestWithdrawal(key)).toBe(made.intentId);
  });

  it('a replica that cannot acknowledge: keyed withdrawals are refused unsent until one can', async () => {
    // A refusal waits out the replica ack (1.2 s); the client's bound only keeps a hang from
    // stalling the test.
    const timeoutMs = 10_000;
    // One replica stalls: the other still acknowledges.
    topology.replicas[0]?.pause();
    try {
      const idempotencyKey = randomUUID();
      expect((await a.withdraw(key, walletId, { idempotencyKey })).intentId).toBeDefined();
      // Both stall: nothing can be acknowledged, so nothing is sent.
      topology.replicas[1]?.pause();
      const otherKey = randomUUID();
      for (const gateway of [a, b]) {
        const refused = await gateway.withdraw(key, walletId, { idempotencyKey: otherKey, timeoutMs });
        expect(refused.intentId).toBeUndefined();
        expect(refused.errors[0]?.extensions).toMatchObject({
          code: 'IDEMPOTENCY_UNAVAILABLE',
          sent: false,
          reason: 'REPLICA_UNACKNOWLEDGED',
        });
      }
      const unkeyed = await b.withdraw(key, walletId, { timeoutMs });
      expect(unkeyed.errors[0]?.extensions).toMatchObject({ reason: 'REPLICA_UNACKNOWLEDGED' });
      expect(posts()).toBe(1);
      topology.replicas[1]?.resume();
      topology.replicas[0]?.resume();
      await eventually('the refused key to work once replicas acknowledge', async () => {
        const done = await a.withdraw(key, walletId, { idempotencyKey: otherKey, timeoutMs });
        return done.intentId !== undefined;
      });
      expect(posts()).toBe(2);
    } finally {
      topology.replicas[0]?.resume();
      topology.replicas[1]?.resume();
    }
  });

  // Two failover bounds of 45 s, and the news's 20 s, past the suite's 60 s.
  it('after the master is killed: withdrawals work again within 45 s with no restart, and every record written before survives', {
    timeout: 150_000,
  }, async () => {
    // Records written before the failover, some answered on each gateway.
    const before: { idempotencyKey: string; intentId: string }[] = [];
    for (let i = 0; i < 10; i++) {
      const idempotencyKey = randomUUID();
      const done = await (i % 2 ? a : b).withdraw(key, walletId, { idempotencyKey, amount: `${i + 1}.00` });
      expect(done.intentId).toBeDefined();
      before.push({ idempotencyKey, intentId: done.intentId as string });
    }
    // A subscriber on B, whose poller may be on A: it must see a change made after the failover.
    const watched = before[0]?.intentId as string;
    const watch = 'subscription Watch($id: ID!) { withdrawalIntentUpdated(id: $id) { restId status } }';
    const stream = await subscribeSSE(b.remote, watch, { id: watched }, key);
    expect((await stream.next())?.data.withdrawalIntentUpdated.status).toBe('PREPARING');
    const postsBefore = posts();
    const oldMaster = topology.currentMasterPort();
    await topology.master.kill();

    const killedAt = Date.now();
    // Each gateway follows the failover by itself: a new keyed withdrawal works on both. Each has
    // its own bound, far above a failover's few seconds, so one slow to elect does not starve the
    // other; a gateway that never follows still fails. The same key each time: one POST at most.
    for (const gateway of [a, b]) {
      const idempotencyKey = randomUUID();
      await eventually(
        'a new keyed withdrawal to be created',
        async () =>
          (await gateway.withdraw(key, walletId, { idempotencyKey, timeoutMs: 10_000 })).intentId !==
          undefined,
        45_000,
      );
    }
    const recoveredMs = Date.now() - killedAt;
    expect(topology.currentMasterPort()).not.toBe(oldMaster);
    expect(posts()).toBe(postsBefore + 2);
    console.log(
      `Sentinel failover: keyed withdrawals worked again on both gateways ${recoveredMs} ms after the master was killed`,
    );

    // Every record written before the failover: the same intent, nothing sent.
    for (const [i, record] of before.entries()) {
      const replay = await (i % 2 ? b : a).withdraw(key, walletId, {
        idempotencyKey: record.idempotencyKey,
        amount: `${i + 1}.00`,
      });
      expect(replay).toEqual({ intentId: record.intentId, errors: [] });
    }
    expect(posts()).toBe(postsBefore + 2);

    for (const status of ['reviewing', 'pending', 'completed']) {
      await sandbox.world.transitionWithdrawal(watched, status);
    }
    const rest = await Promise.race([
      stream.rest(),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('no news after failover')), 20_000),
      ),
    ]);
    expect(rest.at(-1)?.data.withdrawalIntentUpdated.status).toBe('COMPLETED');
  });
});
