import { randomUUID } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connectRedis } from '../../src/redis/connection.ts';
import { ReplicaAckError } from '../../src/withdrawals/idempotency-store.ts';
import { RedisIdempotencyStore } from '../../src/withdrawals/redis-idempotency-store.ts';
import { eventually, type GatewayProcess, startGatewayProcess } from '../support/fleet-process.ts';
import { type RedisCluster, startRedisCluster } from '../support/redis.ts';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.ts';
import { subscribeSSE } from '../support/subscriptions.ts';
import { recordSuiteKey } from '../support/suite-logs.ts';

/**
 * The fleet on a Redis Cluster, configured by name only (REDIS_CLUSTER_NODES; REDIS_MIN_REPLICA_ACKS
 * left at its Cluster default of 1): three masters with a replica each, real redis-server
 * processes made into a Cluster by `redis-cli --cluster create`, and two gateway processes with
 * a shared rate limit, in front of a REST API that does not deduplicate. Every script must touch
 * one slot, pub/sub must reach every node's subscribers, and the WAIT must go to the node that
 * took the write. POSTs are counted at the sandbox.
 */

const RATE = 30;
let cluster: RedisCluster;
let sandbox: TestSandbox;
let a: GatewayProcess;
let b: GatewayProcess;

beforeAll(async () => {
  cluster = await startRedisCluster(1);
  sandbox = await startTestSandbox();
  sandbox.sandbox.idempotencyExtension = false;
  const env = {
    REDIS_CLUSTER_NODES: cluster.addresses,
    RATE_LIMIT_PER_KEY: `${RATE}/m`,
    // Replica acks wait 60% of this: room for six redis-servers sharing a busy machine.
    REDIS_TIMEOUT_MS: '2000',
  };
  [a, b] = await Promise.all([
    startGatewayProcess(sandbox.url, env),
    // B keeps its cached reads a minute: only A's notice can make it read again within a test.
    startGatewayProcess(sandbox.url, { ...env, UPSTREAM_CACHE_TTL_MS: '60000' }),
  ]);
});
afterAll(async () => {
  a?.stop('gateway A, Cluster');
  b?.stop('gateway B, Cluster');
  await sandbox?.close();
  await cluster?.close();
});
beforeEach(() => {
  sandbox.sandbox.requests.length = 0;
});

async function merchant() {
  const m = await sandbox.world.merchant();
  recordSuiteKey(m.key);
  const wallet = await sandbox.world.wallet(m.id, { USDT: '100000', TRX: '10' });
  return { key: m.key, walletId: wallet.id as string };
}
const posts = () => sandbox.sandbox.requests.filter((r) => r.method === 'POST').length;

describe('Redis Cluster (three masters, a replica each)', () => {
  it('one key over two gateways: one POST, and every answer the same intent; keys of many callers spread over the slots', async () => {
    const callers = await Promise.all(Array.from({ length: 6 }, () => merchant()));
    for (const { key, walletId } of callers) {
      const idempotencyKey = randomUUID();
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).withdraw(key, walletId, { idempotencyKey })),
      );
      expect(answers.flatMap((answer) => answer.errors)).toEqual([]);
      expect(new Set(answers.map((answer) => answer.intentId)).size).toBe(1);
    }
    expect(posts()).toBe(callers.length);
  });

  it('read-your-writes: a withdrawal made on A is in the next list read on B', async () => {
    const { key, walletId } = await merchant();
    // B has the list in its micro-cache now; A's notice through Redis must make B read again.
    await b.newestWithdrawal(key);
    const made = await a.withdraw(key, walletId, { idempotencyKey: randomUUID() });
    // A's publish is in Redis before A answers, but reaches B's node over the cluster bus a moment
    // later. A B never told keeps its cached list far longer than this wait, so it still fails.
    await eventually(
      'B to list the withdrawal made on A',
      async () => (await b.newestWithdrawal(key)) === made.intentId,
      10_000,
    );
    expect(await b.newestWithdrawal(key)).toBe(made.intentId);
  });

  it('a subscription fans out: subscribers on both gateways get the news of one poller', async () => {
    const { key, walletId } = await merchant();
    const made = await a.withdraw(key, walletId, { idempotencyKey: randomUUID() });
    const watch = 'subscription Watch($id: ID!) { withdrawalIntentUpdated(id: $id) { restId status } }';
    const streams = await Promise.all(
      [a, b, b].map((gateway) => subscribeSSE(gateway.remote, watch, { id: made.intentId }, key)),
    );
    for (const stream of streams) {
      expect((await stream.next())?.data.withdrawalIntentUpdated.status).toBe('PREPARING');
    }
    for (const status of ['reviewing', 'pending', 'completed']) {
      await sandbox.world.transitionWithdrawal(made.intentId as string, status);
    }
    for (const stream of streams) {
      const rest = await stream.rest();
      expect(rest.at(-1)?.data.withdrawalIntentUpdated.status).toBe('COMPLETED');
    }
  });

  it('the rate limit is shared by the fleet: counted once across both gateways', async () => {
    const { key } = await merchant();
    const read = (gateway: GatewayProcess) =>
      gateway.graphql(key, '{ wallets(first: 1) { edges { node { id } } } }');
    const statuses: number[] = [];
    for (let i = 0; i < RATE + 1; i++) statuses.push((await read(i % 2 ? a : b)).status);
    expect(statuses.slice(0, RATE).every((status) => status === 200)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
  });

  it('a write waits for the replica of the master that took it, not of any node', async () => {
    const client = (await connectRedis(
      {
        topology: {
          kind: 'cluster',
          nodes: cluster.nodes.map((node) => ({ host: '127.0.0.1', port: node.port })),
        },
        // Far above a round trip on a busy machine, and above the WAIT's own timeout below.
        timeoutMs: 3_000,
        minReplicaAcks: 1,
      },
      pino({ level: 'silent' }),
    )) as Cluster;
    const store = new RedisIdempotencyStore(client, {
      maxKeysPerCaller: 100,
      minReplicaAcks: 1,
      // A paused replica never acks; a running one does well within this, even on a busy machine.
      ackTimeoutMs: 1_000,
    });
    try {
      // Two payouts whose attempts live on different masters.
      // CLUSTER NODES: "<id> <ip:port@bus> <flags> <master id or -> …" per node.
      const nodes = ((await client.cluster('NODES')) as string)
        .trim()
        .split('\n')
        .map((line) => line.split(' '))
        .map(([id, address, flags, masterId]) => ({ id, address: address?.split('@')[0], flags, masterId }));
      const ownerOf = async (payout: string) => {
        const slot = (await client.cluster('KEYSLOT', `mwg:{${payout}}:attempts`)) as number;
        const master = client.slots[slot]?.[0];
        const id = nodes.find((node) => node.address === master)?.id;
        return [master, nodes.find((node) => node.masterId === id)?.address];
      };
      const first = `payout-${randomUUID()}`;
      const [masterOfFirst, replicaOfFirst] = await ownerOf(first);
      let second = `payout-${randomUUID()}`;
      while ((await ownerOf(second))[0] === masterOfFirst) second = `payout-${randomUUID()}`;
      const replica = cluster.nodes.find((node) => `127.0.0.1:${node.port}` === replicaOfFirst);
      expect(replica).toBeDefined();
      const attempt = () => ({
        id: randomUUID(),
        owner: 'o',
        sentAt: Date.now(),
        endsBy: Date.now(),
        endedAt: null,
      });
      replica?.pause();
      try {
        await expect(store.putSubmission(first, attempt())).rejects.toBeInstanceOf(ReplicaAckError);
        await expect(store.putSubmission(second, attempt())).resolves.toBeUndefined();
      } finally {
        replica?.resume();
      }
      await expect(store.putSubmission(first, attempt())).resolves.toBeUndefined();
    } finally {
      client.disconnect();
    }
  });
});
