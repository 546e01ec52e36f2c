import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayMetrics } from '../../../src/observability/metrics.ts';
import { connectRedis, type RedisClient } from '../../../src/redis/connection.ts';
import { fleetEvents, fleetScopeSecret } from '../../../src/redis/fleet.ts';
import { createGatewayRuntime } from '../../../src/runtime.ts';
import { createLogger } from '../../../src/shared/logger.ts';
import { redisLeases } from '../../../src/subscriptions/leases.ts';
import { LivePolling } from '../../../src/subscriptions/live.ts';
import { CallerScopes } from '../../../src/upstream/caller-scope.ts';
import { createCallers } from '../../../src/upstream/callers.ts';
import { MerchantWalletClient } from '../../../src/upstream/client.ts';
import type { Gateway } from '../../../src/yoga.ts';
import { DEFAULTS } from '../../support/gateway.ts';
import { parseMetrics, sampleSum } from '../../support/metrics.ts';
import { type RunningRedis, startRedis } from '../../support/redis.ts';
import { startTestSandbox, type TestSandbox, withdrawalBody } from '../../support/sandbox.ts';
import { type ResultStream, subscribeSSE } from '../../support/subscriptions.ts';
import { recordSuiteKey, suiteLogDestination } from '../../support/suite-logs.ts';

/**
 * Two gateway processes sharing only Redis, wired as src/runtime.ts wires them: subscribers of one
 * intent on both get every change, while one process alone polls the REST API for it (the lease
 * holder) and Redis carries its news to the other. When the holder's last subscriber leaves, the
 * other takes the lease over.
 */

const WATCH = 'subscription Watch($id: ID!) { withdrawalIntentUpdated(id: $id) { restId status } }';

let redis: RunningRedis;
let sandbox: TestSandbox;
let key: string;
let walletId: string;
const connections: RedisClient[] = [];
const closers: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  redis = await startRedis();
  sandbox = await startTestSandbox();
  const merchant = await sandbox.world.merchant();
  key = merchant.key;
  recordSuiteKey(key);
  walletId = (await sandbox.world.wallet(merchant.id)).id;
});
afterAll(async () => {
  for (const close of closers) await close();
  for (const connection of connections) connection.disconnect();
  await sandbox.close();
  await redis.close();
});

async function gatewayProcess() {
  const logger = createLogger('debug', suiteLogDestination());
  const connection = await connectRedis(redis.url, pino({ level: 'silent' }));
  connections.push(connection);
  const metrics = new GatewayMetrics({ maxOperationNames: 10, processMetrics: false });
  const client = new MerchantWalletClient({
    ...DEFAULTS.upstream,
    baseURL: sandbox.url,
    cacheTtlMs: 0,
    scopes: new CallerScopes(await fleetScopeSecret(connection)),
  });
  const { events, subscriber, watchDelivery } = fleetEvents(connection, logger);
  connections.push(subscriber);
  const live = new LivePolling({
    client,
    events,
    leases: redisLeases(connection),
    pollMs: 20,
    maxPollMs: 20,
    perKey: 10,
    max: 100,
    callers: createCallers(client, DEFAULTS),
    logger,
    metrics,
  });
  // Wired as src/runtime.ts (livePolling) wires it.
  watchDelivery({ lost: () => live.deliveryLost(), restored: () => void live.catchUp() }, 500);
  const runtime = await createGatewayRuntime(DEFAULTS, { logger, client, live, metrics });
  closers.push(
    async () => await runtime[Symbol.asyncDispose](),
    () => live.close(),
    () => client.close(),
  );
  const { gateway } = runtime;
  const polls = async (feed?: string) =>
    sampleSum(
      parseMetrics((await metrics.scrape()).body),
      'gateway_subscription_polls_total',
      feed ? { feed } : {},
    );
  return { gateway, live, polls, scopeOf: (authorization: string) => client.scopeOf(authorization) };
}

/** A new intent of the merchant, watched through `on`, its first event (PREPARING) read. */
async function watchNewIntent(on: { gateway: Gateway }) {
  const created = await sandbox.call('POST', '/external/v1/withdrawal-intents', {
    key,
    body: withdrawalBody(walletId),
  });
  const id = created.body.data.id as string;
  const stream = await subscribeSSE(on.gateway, WATCH, { id }, key);
  expect((await stream.next())?.data.withdrawalIntentUpdated.status).toBe('PREPARING');
  return { id, stream };
}

describe('subscriptions in a fleet', () => {
  it('one process polls an intent for both; the other gets the news through Redis, and takes over when the first leaves', async () => {
    const a = await gatewayProcess();
    const b = await gatewayProcess();
    const created = await sandbox.call('POST', '/external/v1/withdrawal-intents', {
      key,
      body: withdrawalBody(walletId),
    });
    const id = created.body.data.id as string;
    const onA = await subscribeSSE(a.gateway, WATCH, { id }, key);
    const onB = await subscribeSSE(b.gateway, WATCH, { id }, key);
    expect((await onA.next())?.data.withdrawalIntentUpdated.status).toBe('PREPARING');
    expect((await onB.next())?.data.withdrawalIntentUpdated.status).toBe('PREPARING');

    await sandbox.world.transitionWithdrawal(id, 'reviewing');
    expect((await onA.next())?.data.withdrawalIntentUpdated.status).toBe('REVIEWING');
    expect((await onB.next())?.data.withdrawalIntentUpdated.status).toBe('REVIEWING');
    // Exactly one of the two polled, and every read of the intent past the two first ones was its poll.
    const [pollsA, pollsB] = [await a.polls(), await b.polls()];
    expect(Math.min(pollsA, pollsB)).toBe(0);
    expect(Math.max(pollsA, pollsB)).toBeGreaterThan(0);
    const reads = () =>
      sandbox.sandbox.requests.filter(
        (r) => r.method === 'GET' && r.path.endsWith(`/withdrawal-intents/${id}`),
      ).length;
    // The leader goes on polling: a read the sandbox logged may not be counted yet, so wait for both to agree.
    await expect.poll(async () => reads() - (await a.polls()) - (await b.polls())).toBe(2);

    // The polling process's subscriber leaves: it gives the lease up, and the other one polls now.
    const [leader, leaderStream, follower, followerStream] = pollsA > 0 ? [a, onA, b, onB] : [b, onB, a, onA];
    leaderStream.close();
    await expect.poll(() => leader.live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
    await sandbox.world.transitionWithdrawal(id, 'pending');
    expect((await followerStream.next())?.data.withdrawalIntentUpdated.status).toBe('PENDING');
    expect(await follower.polls()).toBeGreaterThan(0);
    followerStream.close();
    await expect.poll(() => follower.live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
  });

  it('Redis down: the stream stays open; Redis back: the change made meanwhile arrives', async () => {
    const a = await gatewayProcess();
    const { id, stream } = await watchNewIntent(a);
    await redis.stop();
    await sandbox.world.transitionWithdrawal(id, 'reviewing');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(a.live.activity()).toEqual({ subscriptions: 1, pollers: 1 });
    await redis.start();
    expect((await stream.next())?.data.withdrawalIntentUpdated.status).toBe('REVIEWING');
    stream.close();
    await expect.poll(() => a.live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
  });

  it("the final status, published while a replica's Redis subscriber connection was down, reaches its subscribers when it is back", async () => {
    const a = await gatewayProcess();
    const { id, stream } = await watchNewIntent(a);
    // Only the subscriber connections drop: the poller keeps its lease and publishes into the void,
    // then stops at the final status. Without a catch-up this stream would wait forever.
    const admin = await connectRedis(redis.url, pino({ level: 'silent' }));
    connections.push(admin);
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    for (const status of ['reviewing', 'pending', 'completed']) {
      await sandbox.world.transitionWithdrawal(id, status);
    }
    const rest = await stream.rest();
    expect(rest.at(-1)?.data.withdrawalIntentUpdated.status).toBe('COMPLETED');
    expect(a.live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
  });
});

const DEPOSITS = `subscription Deposits($walletId: ID) {
  depositsUpdated(walletId: $walletId) { restId walletRestId status }
}`;

type GatewayProcess = Awaited<ReturnType<typeof gatewayProcess>>;

/** Until `count` replicas listen on the key's deposits feed in Redis, and one of `processes` polled it since. */
async function depositsWatched(count: number, ...processes: GatewayProcess[]) {
  const admin = await connectRedis(redis.url, pino({ level: 'silent' }));
  connections.push(admin);
  const channel = `deposits:${processes[0]?.scopeOf(`Bearer ${key}`)}`;
  await expect
    .poll(async () => ((await admin.call('PUBSUB', 'NUMSUB', channel)) as [string, number])[1])
    .toBe(count);
  const polled = async () => {
    let sum = 0;
    for (const process of processes) sum += await process.polls('deposits');
    return sum;
  };
  const before = await polled();
  await expect.poll(polled).toBeGreaterThan(before);
}

async function deposit(status: string): Promise<string> {
  return (await sandbox.world.deposit(walletId, { amount: '9.99', status })).id as string;
}

const event = async (stream: ResultStream) => {
  const value = (await stream.next())?.data.depositsUpdated;
  return value && `${value.restId}:${value.status}`;
};

describe('live deposits in a fleet', () => {
  it("one process polls the key's deposits for both; each subscriber gets every deposit and status change once, and the other process takes over when the first leaves", async () => {
    const a = await gatewayProcess();
    const b = await gatewayProcess();
    const onA = await subscribeSSE(a.gateway, DEPOSITS, { walletId }, key);
    const onB = await subscribeSSE(b.gateway, DEPOSITS, {}, key);
    await expect
      .poll(() => [a.live.activity(), b.live.activity()])
      .toEqual([
        { subscriptions: 1, pollers: 1 },
        { subscriptions: 1, pollers: 1 },
      ]);
    await depositsWatched(2, a, b);

    const id = await deposit('pending');
    expect(await event(onA)).toBe(`${id}:PENDING`);
    expect(await event(onB)).toBe(`${id}:PENDING`);
    await sandbox.world.transitionDeposit(id, 'completed');
    expect(await event(onA)).toBe(`${id}:COMPLETED`);
    expect(await event(onB)).toBe(`${id}:COMPLETED`);
    // Exactly one of the two polled; every newest-page read past the two first ones was its poll.
    const [pollsA, pollsB] = [await a.polls('deposits'), await b.polls('deposits')];
    expect(Math.min(pollsA, pollsB)).toBe(0);
    expect(Math.max(pollsA, pollsB)).toBeGreaterThan(0);
    const newestReads = () =>
      sandbox.sandbox.requests.filter(
        (r) => r.method === 'GET' && r.path === '/external/v1/deposits?page=1&size=50',
      ).length;
    await expect
      .poll(async () => newestReads() - (await a.polls('deposits')) - (await b.polls('deposits')))
      .toBe(2);

    // The polling process's subscriber leaves: the other takes the lease over. Its first state is
    // older than what its subscriber was sent, so it publishes that deposit again: dropped.
    const [leader, leaderStream, follower, followerStream] = pollsA > 0 ? [a, onA, b, onB] : [b, onB, a, onA];
    leaderStream.close();
    await expect.poll(() => leader.live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
    const followerPolls = await follower.polls('deposits');
    const next = await deposit('completed');
    expect(await event(followerStream)).toBe(`${next}:COMPLETED`);
    expect(await follower.polls('deposits')).toBeGreaterThan(followerPolls);
    followerStream.close();
    await expect.poll(() => follower.live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
  });

  it("a deposit published while a replica's Redis subscriber connection was down reaches its subscribers when it is back, once", async () => {
    const a = await gatewayProcess();
    const stream = await subscribeSSE(a.gateway, DEPOSITS, { walletId }, key);
    await expect.poll(() => a.live.activity()).toEqual({ subscriptions: 1, pollers: 1 });
    await depositsWatched(1, a);
    // Only the subscriber connections drop: the poller keeps its lease and publishes into the void.
    const admin = await connectRedis(redis.url, pino({ level: 'silent' }));
    connections.push(admin);
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    const id = await deposit('pending');
    await sandbox.world.transitionDeposit(id, 'completed');
    // Its news came by Redis or by the catch-up; either way the deposit as it is now, and nothing twice.
    const seen: string[] = [];
    while (seen.at(-1) !== `${id}:COMPLETED`) seen.push((await event(stream)) as string);
    expect([[`${id}:COMPLETED`], [`${id}:PENDING`, `${id}:COMPLETED`]]).toContainEqual(seen);
    const sentinel = await deposit('completed');
    expect(await event(stream)).toBe(`${sentinel}:COMPLETED`);
    stream.close();
    await expect.poll(() => a.live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
  });
});
