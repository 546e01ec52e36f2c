import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRateLimiter, type RateLimit } from '../../../src/plugins/rate-limit.ts';
import { connectRedis, type RedisClient, warnIfRedisEvicts } from '../../../src/redis/connection.ts';
import { fleetInvalidation, fleetScopeSecret, keepFleetScopeSecret } from '../../../src/redis/fleet.ts';
import { createGatewayRuntime } from '../../../src/runtime.ts';
import { Money } from '../../../src/sandbox/money.ts';
import { globalIdOf } from '../../../src/schema/global-ids.ts';
import { createLogger } from '../../../src/shared/logger.ts';
import { CallerScopes } from '../../../src/upstream/caller-scope.ts';
import { MerchantWalletClient } from '../../../src/upstream/client.ts';
import type { IdempotencyStore } from '../../../src/withdrawals/idempotency-store.ts';
import { MemoryIdempotencyStore } from '../../../src/withdrawals/memory-idempotency-store.ts';
import { RedisIdempotencyStore } from '../../../src/withdrawals/redis-idempotency-store.ts';
import { DEFAULTS, testConfig } from '../../support/gateway.ts';
import { type RunningRedis, startRedis } from '../../support/redis.ts';
import {
  EXTERNAL_TRON_ADDRESS,
  startTestSandbox,
  type TestSandbox,
  withdrawalBody,
} from '../../support/sandbox.ts';
import { recordSuiteKey, suiteLogDestination } from '../../support/suite-logs.ts';

/**
 * One idempotency key, several gateway processes, one REST API that does not deduplicate (the
 * sandbox's Idempotency-Key extension is off, as the spec does not promise it): exactly one POST
 * reaches the REST API. Each gateway here has its own client, pool, cache, connection to Redis
 * and process-local state, as separate processes would; they share only Redis. Calls are counted at
 * the sandbox.
 */

let redis: RunningRedis;
let sandbox: TestSandbox;
let key: string;
let walletId: string;
const connections: RedisClient[] = [];
const clients: MerchantWalletClient[] = [];
const stops: (() => void)[] = [];
/** The gateway processes' runtimes, disposed of before the clients and connections they use. */
const runtimes = new AsyncDisposableStack();

beforeAll(async () => {
  redis = await startRedis();
  sandbox = await startTestSandbox();
  sandbox.sandbox.idempotencyExtension = false;
  const merchant = await sandbox.world.merchant();
  key = merchant.key;
  recordSuiteKey(key);
  walletId = (await sandbox.world.wallet(merchant.id, { USDT: '100000', TRX: '10' })).id;
});
afterAll(async () => {
  await runtimes.disposeAsync();
  for (const stop of stops) stop();
  for (const client of clients) await client.close();
  for (const connection of connections) connection.disconnect();
  await sandbox.close();
  await redis.close();
});
beforeEach(() => {
  sandbox.sandbox.requests.length = 0;
});

/** A gateway as one process of a fleet would build it: with Redis, or alone with its memory. */
async function gatewayProcess(
  shared: 'redis' | 'memory',
  options: { leaseMs?: number; cacheTtlMs?: number; invalidation?: boolean; rateLimit?: RateLimit } = {},
) {
  let store: IdempotencyStore;
  let fleetStore: RedisIdempotencyStore | undefined;
  let scopeSecret: Buffer | undefined;
  let connection: RedisClient | undefined;
  if (shared === 'redis') {
    connection = await connectRedis(redis.url, pino({ level: 'silent' }));
    connections.push(connection);
    fleetStore = new RedisIdempotencyStore(connection, { maxKeysPerCaller: 1000 });
    store = fleetStore;
    scopeSecret = await fleetScopeSecret(connection);
  } else {
    store = new MemoryIdempotencyStore({ maxKeys: 1000, maxKeysPerCaller: 1000 });
  }
  // Wired as src/runtime.ts wires it.
  const invalidation =
    connection && options.invalidation !== false
      ? fleetInvalidation(connection, pino({ level: 'silent' }))
      : undefined;
  const client = new MerchantWalletClient({
    ...DEFAULTS.upstream,
    retryBaseDelayMs: 1,
    baseURL: sandbox.url,
    cacheTtlMs: options.cacheTtlMs ?? 0,
    ...(scopeSecret && { scopes: new CallerScopes(scopeSecret) }),
    ...(invalidation && { onWithdrawal: invalidation.publish }),
  });
  clients.push(client);
  if (connection && scopeSecret) {
    // Checked every 100 ms here rather than every 30 s; reconnections trigger a check as well.
    stops.push(
      keepFleetScopeSecret(
        connection,
        scopeSecret,
        (secret) => client.scopes.useSecret(secret),
        pino({ level: 'silent' }),
        100,
        () => fleetStore?.markDataLoss() ?? Promise.resolve(),
      ),
    );
  }
  const subscriber = await invalidation?.subscribe((scope) => client.invalidateScope(scope));
  if (subscriber) connections.push(subscriber);
  const runtime = await createGatewayRuntime(
    // A short late-commit allowance: a retry after a lost answer reconciles within a test's time.
    testConfig({
      idempotencyLeaseMs: options.leaseMs ?? DEFAULTS.idempotencyLeaseMs,
      reconcile: { lateCommitMs: 200 },
    }),
    {
      logger: createLogger('debug', suiteLogDestination()),
      client,
      processMetrics: false,
      idempotencyStore: store,
      ...(options.rateLimit && { rateLimiter: createRateLimiter(options.rateLimit, connection) }),
    },
  );
  runtimes.use(runtime);
  const { gateway } = runtime;
  const withdraw = async (idempotencyKey: string | null, amount = '1.00', as = key) => {
    const response = await gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${as}` },
      body: JSON.stringify({
        query: `mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) {
          __typename ... on CreateWithdrawalIntentSuccess { withdrawalIntent { restId } } } }`,
        variables: {
          input: {
            walletId,
            serviceFeeMode: 'EXCLUSIVE',
            currencyCode: 'USDT',
            amount,
            destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS },
            ...(idempotencyKey !== null && { idempotencyKey }),
          },
        },
      }),
    });
    const body = (await response.json()) as {
      data?: { createWithdrawalIntent: { withdrawalIntent?: { restId: string } } | null } | null;
      errors?: { extensions: Record<string, unknown> }[];
    };
    return { status: response.status, id: body.data?.createWithdrawalIntent?.withdrawalIntent?.restId, body };
  };
  /** The wallet's locked USDT, as this process shows it. */
  const locked = async (): Promise<string> => {
    const response = await gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({
        query: `{ wallet(id: "${walletId}") { asset(currencyCode: "USDT") { balance { lockedAmount } } } }`,
      }),
    });
    const body = (await response.json()) as {
      data: { wallet: { asset: { balance: { lockedAmount: string } } } };
    };
    return body.data.wallet.asset.balance.lockedAmount;
  };
  /** A small read as `as` (a key), answering the HTTP status and Retry-After. */
  const read = async (as: string) => {
    const response = await gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${as}` },
      body: JSON.stringify({ query: '{ wallets(first: 1) { totalCount } }' }),
    });
    const body = (await response.json()) as { errors?: { extensions: Record<string, unknown> }[] };
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body };
  };
  return Object.assign(withdraw, { locked, read, scopeOf: (as: string) => client.scopeOf(`Bearer ${as}`) });
}

const posts = () => sandbox.sandbox.requests.filter((r) => r.method === 'POST').length;

describe('one idempotency key across gateway processes', () => {
  it('control: with per-process stores, two processes send two POSTs (what Redis is for)', async () => {
    const [a, b] = [await gatewayProcess('memory'), await gatewayProcess('memory')];
    const [first, second] = [await a('control'), await b('control')];
    expect(posts()).toBe(2);
    expect(first.id).not.toBe(second.id);
  });

  it('500 concurrent submissions spread over two processes: one POST, one intent, every answer the same', async () => {
    const [a, b] = [await gatewayProcess('redis'), await gatewayProcess('redis')];
    const answers = await Promise.all(Array.from({ length: 500 }, (_, i) => (i % 2 ? a : b)('fleet-500')));
    expect(posts()).toBe(1);
    const ids = new Set(answers.map((answer) => answer.id));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toEqual(expect.any(String));
    // A replay through either process, later, sends nothing.
    expect((await b('fleet-500')).id).toBe([...ids][0]);
    expect((await a('fleet-500')).id).toBe([...ids][0]);
    expect(posts()).toBe(1);
    // The same key with another amount is refused the same way everywhere.
    expect((await b('fleet-500', '2.00')).body.data?.createWithdrawalIntent).toEqual({
      __typename: 'IdempotencyKeyReusedError',
    });
  });

  it('a process that died holding the key: the next attempt waits out its lease, reconciles, and sends nothing', async () => {
    const [b] = [await gatewayProcess('redis', { leaseMs: 400 })];
    // Process C claimed the key, sent its POST (the REST API created the intent), and was killed
    // before it could save the answer: the key is pending under C's lease.
    const connection = await connectRedis(redis.url, pino({ level: 'silent' }));
    connections.push(connection);
    const scopeClient = new MerchantWalletClient({
      ...DEFAULTS.upstream,
      baseURL: sandbox.url,
      scopes: new CallerScopes(await fleetScopeSecret(connection)),
    });
    clients.push(scopeClient);
    const scope = scopeClient.caller(`Bearer ${key}`).scope;
    const dead = new RedisIdempotencyStore(connection, { maxKeysPerCaller: 1000 });
    // An amount no other test uses: reconciliation matches intents by content.
    const body = withdrawalBody(walletId, { amount: '3.33' });
    const { canonicalJson } = await import('../../../src/shared/canonical-json.ts');
    const { payoutOf } = await import('../../../src/withdrawals/reconcile.ts');
    const { ownerOfKey } = await import('../../../src/withdrawals/idempotency-store.ts');
    const pending = { state: 'pending' as const, fingerprint: canonicalJson(body), startedAt: Date.now() };
    await dead.claim(scope, 'crashed', pending, 400, 'the-dead-process');
    // As WithdrawalService records a POST before it sends it.
    const attempt = {
      id: 'attempt-of-the-dead',
      owner: ownerOfKey(scope, 'crashed'),
      sentAt: Date.now(),
      endsBy: Date.now() + 400,
      endedAt: null,
    };
    await dead.update(scope, 'crashed', { ...pending, attempt }, 'the-dead-process');
    await dead.putSubmission(payoutOf(body), attempt);
    const created = await sandbox.call('POST', '/external/v1/withdrawal-intents', { key, body });
    sandbox.sandbox.requests.length = 0;

    const replay = await b('crashed', '3.33');
    expect(replay.id).toBe(created.body.data.id);
    expect(posts()).toBe(0);
  });

  it('an unauthenticated flood of keyed withdrawals leaves no key in Redis', async () => {
    const a = await gatewayProcess('redis');
    const inspect = await connectRedis(redis.url, pino({ level: 'silent' }));
    connections.push(inspect);
    const before = (await inspect.keys('mwg:*')).sort();
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          a(`flood-${batch}-${i}`, '1.00', `mw_test_made-up-${batch}-${i}-0000000000000000`),
        ),
      );
      expect(answers.map((answer) => answer.body.errors?.[0]?.extensions?.code)).toEqual(
        answers.map(() => 'UNAUTHENTICATED'),
      );
    }
    // Each claim was removed when the REST API refused the key, and each attempt with it.
    expect((await inspect.keys('mwg:*')).sort()).toEqual(before);
  });

  it('warns at start-up when Redis may evict records, and not when it may not', async () => {
    const connection = await connectRedis(redis.url, pino({ level: 'silent' }));
    connections.push(connection);
    const warnings: unknown[] = [];
    const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Parameters<
      typeof warnIfRedisEvicts
    >[1];
    await connection.config('SET', 'maxmemory-policy', 'allkeys-lru');
    await warnIfRedisEvicts(connection, logger);
    expect(warnings).toEqual([[{ maxmemoryPolicy: 'allkeys-lru' }, expect.stringContaining('noeviction')]]);
    await connection.config('SET', 'maxmemory-policy', 'noeviction');
    await warnIfRedisEvicts(connection, logger);
    expect(warnings).toHaveLength(1);
  });

  it('fencing in Redis: a holder paused past its lease and overtaken cannot overwrite or free the key', async () => {
    const connection = await connectRedis(redis.url, pino({ level: 'silent' }));
    connections.push(connection);
    const store = new RedisIdempotencyStore(connection, { maxKeysPerCaller: 1000 });
    const first = { state: 'pending' as const, fingerprint: 'f', startedAt: Date.now() };
    expect(await store.claim('fencing', 'k', first, 50, 'paused')).toBeNull();
    await vi.waitFor(async () => expect((await store.read('fencing', 'k'))?.leased).toBe(false), {
      timeout: 20_000,
      interval: 10,
    });
    const next = { ...first, startedAt: first.startedAt + 1 };
    expect(await store.takeOver('fencing', 'k', first, next, 60_000, 'new')).toBe(true);
    expect(await store.update('fencing', 'k', first, 'paused')).toBe(false);
    expect(await store.settle('fencing', 'k', 'paused', first, null)).toBe(false);
    expect(await store.read('fencing', 'k')).toEqual({ record: next, leased: true });
    const refused = { ...next, state: 'refused' as const, code: 'c', message: 'm' };
    expect(await store.settle('fencing', 'k', 'new', next, refused)).toBe(true);
    expect(await store.read('fencing', 'k')).toEqual({ record: refused, leased: false });
  });

  it('read-your-own-withdrawal across replicas: a read through B after a withdrawal through A shows the lock, not its cached balance', async () => {
    const a = await gatewayProcess('redis', { cacheTtlMs: 60_000 });
    const b = await gatewayProcess('redis', { cacheTtlMs: 60_000 });
    // A replica that does not listen, as control: it keeps serving its cached balance.
    const deaf = await gatewayProcess('redis', { cacheTtlMs: 60_000, invalidation: false });
    const before = await b.locked();
    expect(await deaf.locked()).toBe(before);
    const answer = await a('read-your-own', '7.00');
    expect(answer.id).toEqual(expect.any(String));
    // B's cache holds the old balance for a minute (the deaf replica shows it): a read that shows
    // the lock within seconds is B having been told. How soon B's subscriber hears it depends on
    // the machine, so that is not what is asserted.
    await vi.waitFor(async () => expect(await b.locked()).not.toBe(before), { timeout: 10_000, interval: 5 });
    // 7.00 plus the merchant's flat fee of 1, exactly.
    expect(new Money(await b.locked()).minus(before).toFixed(2)).toBe('8.00');
    expect(await deaf.locked()).toBe(before);
  });

  it('the per-key rate limit holds across two processes: together they admit no more than the limit', async () => {
    const merchant = await sandbox.world.merchant();
    recordSuiteKey(merchant.key);
    await sandbox.world.wallet(merchant.id);
    const limit = { points: 10, durationSeconds: 60 };
    const [a, b] = [
      await gatewayProcess('redis', { rateLimit: limit }),
      await gatewayProcess('redis', { rateLimit: limit }),
    ];
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await (i % 2 ? a : b).read(merchant.key));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(10);
    const refused = answers.filter((r) => r.status === 429);
    expect(refused).toHaveLength(10);
    expect(refused[0]?.body.errors?.[0]?.extensions).toMatchObject({
      code: 'RATE_LIMITED',
      retryAfterSeconds: expect.any(Number),
    });
    expect(Number(refused[0]?.retryAfter)).toBeGreaterThan(0);
    // Refused before any REST call; another key is not affected.
    expect(sandbox.sandbox.requests.filter((r) => r.merchantId === merchant.id)).toHaveLength(10);
    expect((await a.read(key)).status).toBe(200);
  });

  it('Redis down: withdrawals are refused unsent, reads still answer; Redis back: withdrawals work again', async () => {
    const [a] = [await gatewayProcess('redis')];
    await redis.stop();
    const refused = await a('while-down');
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({
      code: 'IDEMPOTENCY_UNAVAILABLE',
      sent: false,
    });
    // Unkeyed too: a POST whose attempt is not registered could have its intent taken by a keyed retry.
    const unkeyed = await a(null);
    expect(unkeyed.body.errors?.[0]?.extensions).toMatchObject({
      code: 'IDEMPOTENCY_UNAVAILABLE',
      sent: false,
    });
    expect(posts()).toBe(0);
    // Reads need no Redis: they are served as usual.
    const read = await a.read(key);
    expect(read.status).toBe(200);
    expect(read.body.errors).toBeUndefined();

    await redis.start();
    // The connection comes back by itself (capped backoff): no restart of the gateway.
    await vi.waitFor(
      async () => {
        const answer = await a('after-recovery');
        expect(answer.id).toEqual(expect.any(String));
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(posts()).toBe(1);
  });

  it('Redis lost its data (a restart without persistence): the processes agree on caller scopes again, so one key still sends one POST', async () => {
    const a = await gatewayProcess('redis');
    await redis.stop();
    await redis.start();
    // Whichever writes the scope secret first, A coming back or C starting now, both end up on it.
    const c = await gatewayProcess('redis');
    await vi.waitFor(() => expect(a.scopeOf(key)).toBe(c.scopeOf(key)), { timeout: 10_000, interval: 50 });
    const [first, second] = await Promise.all([a('after-the-loss'), c('after-the-loss')]);
    expect(first.id).toEqual(expect.any(String));
    expect(second.id).toBe(first.id);
    expect(posts()).toBe(1);
  });

  it('after Redis lost its data, a retry never takes an intent handed out before the loss (its claim went with it)', async () => {
    const [a, b] = [await gatewayProcess('redis'), await gatewayProcess('redis')];
    const handedOut = await a('before-the-loss', '4.56');
    expect(handedOut.id).toEqual(expect.any(String));
    await redis.stop();
    await redis.start();
    // A process notices on reconnection (the scope secret is gone) and marks when the loss was seen.
    const inspect = await connectRedis(redis.url, pino({ level: 'silent' }));
    connections.push(inspect);
    await vi.waitFor(async () => expect(await inspect.get('mwg:registry-since')).not.toBeNull(), {
      timeout: 10_000,
      interval: 50,
    });
    await vi.waitFor(async () => expect((await b.read(key)).status).toBe(200), {
      timeout: 10_000,
      interval: 50,
    });
    // Another key, the same payout; its POST is refused by a 503 before the REST API commits.
    await sandbox.admin('POST', '/faults', {
      method: 'POST',
      path: '/external/v1/withdrawal-intents',
      status: 503,
      times: 1,
    });
    await vi.waitFor(
      async () =>
        expect((await b('after-the-loss-2', '4.56')).body.errors?.[0]?.extensions?.code).toBe(
          'OUTCOME_UNKNOWN',
        ),
      { timeout: 10_000, interval: 100 },
    );
    const sentBefore = posts();
    const retry = await b('after-the-loss-2', '4.56');
    // The intent handed to 'before-the-loss' matches, but its claim is gone: the gateway will not guess.
    expect(retry.id).toBeUndefined();
    expect(retry.body.errors?.[0]?.extensions).toMatchObject({
      code: 'OUTCOME_UNKNOWN',
      reason: 'REGISTRY_RESET',
      candidates: [globalIdOf('WithdrawalIntent', handedOut.id ?? '')],
    });
    expect(posts()).toBe(sentBefore);
  });

  it('a process finding another scope secret in Redis adopts it', async () => {
    const a = await gatewayProcess('redis');
    const before = a.scopeOf(key);
    const other = await connectRedis(redis.url, pino({ level: 'silent' }));
    connections.push(other);
    const replaced = randomBytes(32);
    await other.set('mwg:caller-scope-secret', replaced.toString('base64'));
    const expected = new MerchantWalletClient({
      ...DEFAULTS.upstream,
      baseURL: sandbox.url,
      scopes: new CallerScopes(replaced),
    });
    clients.push(expected);
    await vi.waitFor(() => expect(a.scopeOf(key)).toBe(expected.scopeOf(`Bearer ${key}`)), {
      timeout: 5_000,
      interval: 50,
    });
    expect(a.scopeOf(key)).not.toBe(before);
  });
});
