/**
 * `npm run flood [-- --attempts 100000]`: what an unauthenticated flood of keyed withdrawals leaves
 * in the idempotency store. Sends N createWithdrawalIntent requests, each with a made-up API key
 * (well formed, so the gateway forwards it and the REST API answers 401) and its own
 * idempotencyKey, 64 at a time, through a gateway with the in-process store and then through one
 * with Redis. Prints the store's keys and memory before and after: a refused attempt leaves
 * nothing, so both should end where they began.
 */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { connectRedis, type RedisClient, singleRedis } from '../../src/redis/connection.ts';
import { createGatewayRuntime } from '../../src/runtime.ts';
import { MemoryIdempotencyStore } from '../../src/withdrawals/memory-idempotency-store.ts';
import type { Gateway } from '../../src/yoga.ts';
import { DEFAULTS, testConfig } from '../support/gateway.ts';
import { startRedis } from '../support/redis.ts';
import { startTestSandbox, withdrawalInput } from '../support/sandbox.ts';

const { values } = parseArgs({ options: { attempts: { type: 'string', default: '100000' } } });
const attempts = Number(values.attempts);
const CONCURRENCY = 64;
const silent = pino({ level: 'silent' });

const sandbox = await startTestSandbox();
const merchant = await sandbox.world.merchant();
const wallet = await sandbox.world.wallet(merchant.id);
const input = withdrawalInput(wallet.id);

/** A gateway started by createGatewayRuntime, as src/main.ts starts it; with `redis`, a fleet's replica. */
async function gatewayWith(store: { memory: MemoryIdempotencyStore } | { redis: RedisClient; url: string }) {
  const config = testConfig({
    graphiql: false,
    metrics: undefined,
    ...('redis' in store && { redis: singleRedis(store.url) }),
  });
  const runtime = await createGatewayRuntime(config, {
    logger: silent,
    upstreamURL: sandbox.url,
    upstream: {
      cacheTtlMs: 0,
      // Every attempt is refused by the REST API; the breaker would otherwise refuse them unsent.
      circuitBreaker: { ...DEFAULTS.upstream.circuitBreaker, failures: 0 },
    },
    ...('memory' in store ? { idempotencyStore: store.memory } : { redis: store.redis }),
  });
  return runtime;
}

async function flood(gateway: Gateway): Promise<Map<string, number>> {
  const codes = new Map<string, number>();
  let next = 0;
  const worker = async () => {
    while (next < attempts) {
      const i = next++;
      const response = await gateway.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer mw_flood_${i.toString(36).padStart(8, '0')}_0000000000000000`,
        },
        body: JSON.stringify({
          query:
            'mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename } }',
          variables: { input: { ...input, idempotencyKey: `flood-${i}` } },
        }),
      });
      const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
      const code = body.errors?.[0]?.extensions?.code ?? 'none';
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return codes;
}

function heapMB(): number {
  globalThis.gc?.();
  return Math.round(process.memoryUsage().heapUsed / 1024 / 10.24) / 100;
}

// In process.
const memory = new MemoryIdempotencyStore({
  maxKeys: DEFAULTS.idempotencyMaxKeys,
  maxKeysPerCaller: DEFAULTS.idempotencyMaxKeysPerCaller,
});
const inProcess = await gatewayWith({ memory });
const heapBefore = heapMB();
let started = Date.now();
const memoryCodes = await flood(inProcess.gateway);
const memorySeconds = (Date.now() - started) / 1000;
const heapAfter = heapMB();
console.log(
  `in process: ${attempts} attempts in ${memorySeconds.toFixed(1)} s, answers ${JSON.stringify(Object.fromEntries(memoryCodes))}; ` +
    `store keys ${memory.size}; heap ${heapBefore} MB → ${heapAfter} MB${globalThis.gc ? '' : ' (run with --expose-gc for exact heap figures)'}`,
);

// Redis.
const redis = await startRedis();
const connection = await connectRedis(redis.url, silent);
const fleet = await gatewayWith({ redis: connection, url: redis.url });
const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await connection.info('memory'))?.[1] ?? 0);
const [keysBefore, bytesBefore] = [await connection.dbsize(), await usedMemory()];
started = Date.now();
const redisCodes = await flood(fleet.gateway);
const redisSeconds = (Date.now() - started) / 1000;
const [keysAfter, bytesAfter] = [await connection.dbsize(), await usedMemory()];
console.log(
  `Redis: ${attempts} attempts in ${redisSeconds.toFixed(1)} s, answers ${JSON.stringify(Object.fromEntries(redisCodes))}; ` +
    `keys ${keysBefore} → ${keysAfter}; used_memory ${(bytesBefore / 1048576).toFixed(2)} MB → ${(bytesAfter / 1048576).toFixed(2)} MB`,
);

await inProcess[Symbol.asyncDispose]();
await fleet[Symbol.asyncDispose]();
connection.disconnect();
await redis.close();
await sandbox.close();
process.exit(0);
