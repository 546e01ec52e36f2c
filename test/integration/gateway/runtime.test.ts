import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, type RedisClient, singleRedis } from '../../../src/redis/connection.ts';
import { createGatewayRuntime } from '../../../src/runtime.ts';
import { CallerScopes } from '../../../src/upstream/caller-scope.ts';
import { MerchantWalletClient } from '../../../src/upstream/client.ts';
import { DEFAULTS, livePolling, testConfig } from '../../support/gateway.ts';
import { type RunningRedis, startRedis } from '../../support/redis.ts';
import { startTestSandbox } from '../../support/sandbox.ts';
import { recordSuiteKey } from '../../support/suite-logs.ts';

// The composition root as an operator meets it: a fleet replica taken down by disposal leaves no
// Redis connection behind, a replica that cannot start leaves none either, and a refusal over a
// real socket says what it is.

let redis: RunningRedis;
let admin: RedisClient;
let sandbox: Awaited<ReturnType<typeof startTestSandbox>>;
const logger = pino({ level: 'silent' });

beforeAll(async () => {
  redis = await startRedis();
  admin = await connectRedis(redis.url, logger);
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  admin.disconnect();
  await redis.close();
  await sandbox.close();
});

/** Connections the Redis server holds, this test's own admin connection included. */
async function connections(): Promise<number> {
  const list = (await admin.client('LIST')) as string;
  return list.trim().split('\n').length;
}

const fleetConfig = (changes: Parameters<typeof testConfig>[0] = {}) =>
  testConfig({ redis: singleRedis(redis.url), graphiql: false, ...changes });

describe('createGatewayRuntime', () => {
  it('a fleet replica disposed of closes every Redis connection it opened, after draining', async () => {
    const before = await connections();
    const main = await connectRedis(redis.url, logger);
    const runtime = await createGatewayRuntime(fleetConfig(), {
      logger,
      upstreamURL: sandbox.url,
      redis: main,
      processMetrics: false,
    });
    const running = await runtime.listen({ port: 0, host: '127.0.0.1' });
    // Its store's connections, the invalidation and subscription subscribers, besides `main`.
    expect(await connections()).toBeGreaterThan(before + 1);

    const merchant = await sandbox.world.merchant();
    recordSuiteKey(merchant.key);
    const response = await fetch(`${running.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${merchant.key}` },
      body: JSON.stringify({ query: '{ wallets(first: 1) { totalCount } }' }),
    });
    expect(response.status).toBe(200);

    await runtime[Symbol.asyncDispose]();
    await main.quit();
    expect(await connections()).toBe(before);
    // The server is closed too.
    await expect(fetch(`${running.url}/healthz`)).rejects.toThrow();
  });

  it('a replica that cannot start (METRICS_PORT taken) rejects and leaves no connection behind', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    const before = await connections();
    const main = await connectRedis(redis.url, logger);
    try {
      await expect(
        createGatewayRuntime(fleetConfig({ metrics: { port } }), {
          logger,
          upstreamURL: sandbox.url,
          redis: main,
          processMetrics: false,
        }),
      ).rejects.toThrow(/EADDRINUSE/);
      await main.quit();
      expect(await connections()).toBe(before);
    } finally {
      taken.close();
    }
  });

  it('answers a refusal over a socket with its reason phrase', async () => {
    await using runtime = await createGatewayRuntime(testConfig({ graphiql: false }), {
      logger,
      upstreamURL: sandbox.url,
      processMetrics: false,
    });
    const running = await runtime.listen({ port: 0, host: '127.0.0.1' });
    const answer = await new Promise<{ status?: number; message?: string }>((resolve, reject) => {
      httpRequest(`${running.url}/graphql?api_key=mw_x`, { method: 'POST' }, (res) => {
        res.resume();
        resolve({ status: res.statusCode, message: res.statusMessage });
      })
        .on('error', reject)
        .end('{}');
    });
    expect(answer).toEqual({ status: 400, message: 'Bad Request' });
  });

  it('runs on the parts a test hands in, counts a key by one CallerScopes everywhere, and leaves those parts open', async () => {
    const scopes = new CallerScopes(Buffer.alloc(32, 7));
    const client = new MerchantWalletClient({ ...DEFAULTS.upstream, baseURL: sandbox.url, scopes });
    const live = livePolling(client, logger);
    const limited: string[] = [];
    const rateLimiter = {
      points: 100,
      duration: 1,
      consume: async (key: string) => {
        limited.push(key);
      },
    };
    const merchant = await sandbox.world.merchant();
    recordSuiteKey(merchant.key);
    const authorization = `Bearer ${merchant.key}`;
    try {
      {
        await using runtime = await createGatewayRuntime(testConfig({ graphiql: false }), {
          logger,
          client,
          live,
          rateLimiter,
          processMetrics: false,
        });
        expect([runtime.client, runtime.live, runtime.scopes]).toEqual([client, live, scopes]);
        const response = await runtime.gateway.fetch('http://gateway.test/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization },
          body: JSON.stringify({ query: '{ wallets(first: 1) { totalCount } }' }),
        });
        expect(response.status).toBe(200);
        // The rate limit counted the key by the scopes the client was made with.
        expect(limited).toEqual([scopes.scopeOf(authorization)]);
      }
      // Disposed of: the client it was handed still calls the REST API.
      expect(await client.proveKeyNow(client.caller(authorization))).toEqual({ kind: 'accepted' });
    } finally {
      live.close();
      await client.close();
    }
  });
});
