import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventually, type GatewayProcess, startGatewayProcess } from '../support/fleet-process.ts';
import { parseMetrics, sampleSum } from '../support/metrics.ts';
import { type RunningRedis, startRedis } from '../support/redis.ts';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.ts';
import { subscribeSSE } from '../support/subscriptions.ts';
import { recordSuiteKey } from '../support/suite-logs.ts';

/**
 * A Redis that hangs, as a stalled host, a long fork or a partition makes it: SIGSTOP keeps its
 * connections open and answers nothing. Two gateway processes (`src/main.ts`, configured by
 * REDIS_URL only, one with RATE_LIMIT_PER_KEY) share it, in front of a REST API that does not
 * deduplicate. No request may wait on Redis past its bound (REDIS_TIMEOUT_MS, 500 ms here); each
 * takes its documented degraded path. Every fetch below is bounded, so a hang fails the test
 * instead of stalling it. POSTs are counted at the sandbox.
 *
 * The bound is counted on the loop's awake clock, with up to 3× of wall time on a busy machine, so
 * a command may take 1.5 s: requests that meet the hung Redis get CLIENT_MS, well over a few such
 * commands, yet under the 15 s request deadline a wait on Redis without a bound would run into.
 */
const CLIENT_MS = 10_000;

let redis: RunningRedis;
let sandbox: TestSandbox;
let a: GatewayProcess;
let b: GatewayProcess;

/** Requests one key may make per minute: high enough for every test of a key, and countable. */
const RATE = 40;

beforeAll(async () => {
  redis = await startRedis();
  sandbox = await startTestSandbox();
  sandbox.sandbox.idempotencyExtension = false;
  // A limits each key's rate (its first Redis command of a request is the limiter's); B does not
  // (its first is the withdrawal's claim).
  const env = { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '500' };
  [a, b] = await Promise.all([
    startGatewayProcess(sandbox.url, { ...env, RATE_LIMIT_PER_KEY: `${RATE}/m` }),
    startGatewayProcess(sandbox.url, env),
  ]);
});
afterAll(async () => {
  a?.stop('gateway A, Redis stalled');
  b?.stop('gateway B, Redis stalled');
  await sandbox?.close();
  await redis?.close();
});
beforeEach(() => {
  sandbox.sandbox.requests.length = 0;
});
afterEach(async () => {
  // Whatever a test did, the next one starts with a Redis that answers, and gateways that know it
  // (past the second for which /readyz may repeat an answer from before).
  redis.resume();
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  await eventually('both gateways to see Redis answer', async () => {
    const [ra, rb] = await Promise.all([a.probe('/readyz'), b.probe('/readyz')]);
    return ra.body.idempotencyStore === 'ok' && rb.body.idempotencyStore === 'ok';
  });
  // A scrape needs no Redis: 5 s is only room for a busy machine.
  const scrape = await fetch(`${a.url}/metrics`, { signal: AbortSignal.timeout(5_000) });
  expect(sampleSum(parseMetrics(await scrape.text()), 'gateway_redis_responsive')).toBe(1);
});

async function merchant() {
  const m = await sandbox.world.merchant();
  recordSuiteKey(m.key);
  const wallet = await sandbox.world.wallet(m.id, { USDT: '1000', TRX: '10' });
  return { key: m.key, walletId: wallet.id as string };
}
const posts = () => sandbox.sandbox.requests.filter((r) => r.method === 'POST').length;
/** The payouts' attempt registries in Redis, read with redis-cli. */
const attemptKeys = () =>
  execFileSync('redis-cli', ['-p', String(redis.port), '--scan', '--pattern', 'mwg:*:attempts'], {
    encoding: 'utf8',
  })
    .split('\n')
    .filter(Boolean);

describe('a Redis that hangs (SIGSTOP)', () => {
  it('a keyed withdrawal is refused unsent within the bound, is never sent later, and works once Redis answers', async () => {
    const { key, walletId } = await merchant();
    redis.pause();
    const idempotencyKey = randomUUID();
    // The first on each gateway finds Redis hanging (it waits its 500 ms); the next is refused at
    // once. B's claim was sent: Redis runs it when it resumes.
    for (const gateway of [b, b, a]) {
      const refused = await gateway.withdraw(key, walletId, { idempotencyKey, timeoutMs: CLIENT_MS });
      expect(refused.intentId).toBeUndefined();
      expect(refused.errors[0]?.extensions).toMatchObject({ code: 'IDEMPOTENCY_UNAVAILABLE', sent: false });
    }
    expect(posts()).toBe(0);
    redis.resume();
    // The commands that timed out run now, in Redis; none of them may send anything.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(posts()).toBe(0);
    // The first claim did reach Redis when it resumed; it is released, so the retry need not
    // wait out its 20 s lease.
    await eventually('the gateways to see Redis answer', async () => {
      const [ra, rb] = await Promise.all([a.probe('/readyz'), b.probe('/readyz')]);
      return ra.body.idempotencyStore === 'ok' && rb.body.idempotencyStore === 'ok';
    });
    const retried = await a.withdraw(key, walletId, { idempotencyKey, timeoutMs: 5_000 });
    expect(retried.errors).toEqual([]);
    expect(posts()).toBe(1);
    // And a replay on the other process is the same intent, with nothing sent.
    const first = await b.withdraw(key, walletId, { idempotencyKey });
    const replay = await a.withdraw(key, walletId, { idempotencyKey });
    expect(replay.intentId).toBe(first.intentId);
    expect(posts()).toBe(1);
  });

  it('an unkeyed withdrawal is refused unsent too: its attempt cannot be registered, so it is not sent', async () => {
    const { key, walletId } = await merchant();
    redis.pause();
    const refused = await b.withdraw(key, walletId, { timeoutMs: CLIENT_MS });
    expect(refused.errors[0]?.extensions).toMatchObject({ code: 'IDEMPOTENCY_UNAVAILABLE', sent: false });
    expect(posts()).toBe(0);
    // B's registration of the attempt reaches Redis when it resumes; it is removed once Redis
    // answers, so no keyed retry of the same payout ever meets it as a rival.
    redis.resume();
    await eventually('the refused attempt to be gone from Redis', async () => attemptKeys().length === 0);
  });

  it('a withdrawal whose POST is in flight when Redis hangs is answered with its intent, keyed or not', async () => {
    const { key, walletId } = await merchant();
    // The REST API creates the intent at once and answers 6 s later; Redis hangs meanwhile. The
    // POSTs are seen within 5 s, so Redis is paused before either is answered, however slow the
    // machine; the answers (6 s, then the outcome's write bounded by Redis's 1.5 s) fit in 15 s.
    await sandbox.admin('POST', '/faults', {
      method: 'POST',
      path: '/external/v1/withdrawal-intents',
      respondAfterMs: 6_000,
      times: 2,
    });
    const idempotencyKey = randomUUID();
    const keyed = a.withdraw(key, walletId, { idempotencyKey, timeoutMs: 15_000 });
    const unkeyed = b.withdraw(key, walletId, { amount: '2.00', timeoutMs: 15_000 });
    await eventually('both POSTs to reach the REST API', async () => posts() === 2, 5_000);
    redis.pause();
    const [k, u] = await Promise.all([keyed, unkeyed]);
    expect(k.errors).toEqual([]);
    expect(u.errors).toEqual([]);
    expect(k.intentId).toBeDefined();
    expect(u.intentId).toBeDefined();
    expect(posts()).toBe(2);
    // The keyed outcome is written once Redis answers: a replay then returns the intent at once,
    // rather than waiting out the 20 s lease the unfinished attempt held (so 15 s, not more).
    redis.resume();
    await eventually(
      'a replay to return the same intent',
      async () =>
        (await b.withdraw(key, walletId, { idempotencyKey, timeoutMs: 5_000 })).intentId === k.intentId,
      15_000,
    );
    expect(posts()).toBe(2);
  });

  it('reads are answered, and the rate limit still holds, counted in each process', async () => {
    const { key } = await merchant();
    redis.pause();
    const read = () => a.graphql(key, '{ wallets(first: 1) { edges { node { id } } } }', {}, CLIENT_MS);
    const first = await read();
    expect(first.body.errors).toBeUndefined();
    expect(first.body.data.wallets.edges).toHaveLength(1);
    // This process now counts the key alone: RATE requests per minute, then 429.
    const statuses: number[] = [];
    for (let i = 1; i < RATE + 1; i++) statuses.push((await read()).status);
    expect(statuses.slice(0, RATE - 1).every((status) => status === 200)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
  });

  it('/healthz and /readyz answer without waiting on Redis, and /readyz says the store is unreachable', async () => {
    redis.pause();
    for (const gateway of [a, b]) {
      expect((await gateway.probe('/healthz')).status).toBe(200);
      await eventually('/readyz to see Redis hang', async () => {
        const ready = await gateway.probe('/readyz');
        // Still ready: reads work; withdrawals are refused unsent until Redis answers.
        expect(ready.status).toBe(200);
        return ready.body.idempotencyStore === 'unreachable';
      });
    }
    // The operator sees it too, on every process.
    for (const gateway of [a, b]) {
      const scrape = await fetch(`${gateway.url}/metrics`, { signal: AbortSignal.timeout(5_000) });
      expect(sampleSum(parseMetrics(await scrape.text()), 'gateway_redis_responsive')).toBe(0);
    }
    // A flood of probes is still answered, each within the probe's bound.
    const flood = await Promise.all(Array.from({ length: 50 }, () => a.probe('/readyz')));
    expect(flood.every((probe) => probe.status === 200)).toBe(true);
  });

  it('a subscription pauses while Redis hangs and catches up once it answers', async () => {
    const { key, walletId } = await merchant();
    const created = await a.withdraw(key, walletId, { idempotencyKey: randomUUID() });
    const id = created.intentId as string;
    const watch = 'subscription Watch($id: ID!) { withdrawalIntentUpdated(id: $id) { restId status } }';
    // A subscriber on each process; one of them polls, and Redis carries its news to the other.
    const onA = await subscribeSSE(a.remote, watch, { id }, key);
    const onB = await subscribeSSE(b.remote, watch, { id }, key);
    expect((await onA.next())?.data.withdrawalIntentUpdated.status).toBe('PREPARING');
    expect((await onB.next())?.data.withdrawalIntentUpdated.status).toBe('PREPARING');
    redis.pause();
    await sandbox.world.transitionWithdrawal(id, 'reviewing');
    await sandbox.world.transitionWithdrawal(id, 'pending');
    await sandbox.world.transitionWithdrawal(id, 'completed');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    redis.resume();
    for (const stream of [onA, onB]) {
      const rest = await Promise.race([
        stream.rest(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no catch-up')), 15_000)),
      ]);
      expect(rest.at(-1)?.data.withdrawalIntentUpdated.status).toBe('COMPLETED');
    }
  });
});

describe('a Redis that is killed (SIGKILL) and comes back empty', () => {
  it('refuses keyed withdrawals unsent at once, keeps reads, and works again once Redis is back', async () => {
    const { key, walletId } = await merchant();
    await redis.kill();
    const refused = await a.withdraw(key, walletId, { idempotencyKey: randomUUID(), timeoutMs: CLIENT_MS });
    expect(refused.errors[0]?.extensions).toMatchObject({ code: 'IDEMPOTENCY_UNAVAILABLE', sent: false });
    const read = await b.graphql(key, '{ wallets(first: 1) { edges { node { id } } } }', {}, CLIENT_MS);
    expect(read.body.data.wallets.edges).toHaveLength(1);
    expect((await a.probe('/readyz')).status).toBe(200);
    expect(posts()).toBe(0);
    await redis.start();
    const idempotencyKey = randomUUID();
    await eventually('keyed withdrawals to work again', async () => {
      const done = await a.withdraw(key, walletId, { idempotencyKey, timeoutMs: CLIENT_MS });
      return done.intentId !== undefined;
    });
    expect(posts()).toBe(1);
  });
});
