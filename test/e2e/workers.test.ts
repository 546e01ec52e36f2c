import { execFileSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_ADMIN_TOKEN } from '../../src/sandbox/config.ts';
import { DEMO_KEYS } from '../../src/sandbox/seed.ts';
import { parseMetrics, sampleSum } from '../support/metrics.ts';
import { freePort, startProcess } from '../support/process.ts';
import { type RunningRedis, startRedis } from '../support/redis.ts';
import { captureProcessOutput } from '../support/suite-logs.ts';

/**
 * `npm start` with WORKERS=2 and REDIS_URL, as processes: a supervisor and two gateway workers on
 * one port, in front of a sandbox process whose Idempotency-Key extension is off (a REST API that
 * does not deduplicate). POSTs are counted by the sandbox's admin API.
 */

type Started = Awaited<ReturnType<typeof startProcess>>;
let redis: RunningRedis;
let sandbox: Started;
let fleet: Started;
let metricsPort: number;

beforeAll(async () => {
  redis = await startRedis();
  metricsPort = await freePort();
  sandbox = await startProcess(
    'src/sandbox/main.ts',
    ['--port', '0', '--idempotency-extension', 'off'],
    { LOG_LEVEL: 'warn' },
    /Try: curl .* (http:\/\/\S+)\/external\/v1\/wallets/,
  );
  fleet = await startProcess(
    'src/main.ts',
    [],
    {
      PORT: '0',
      WORKERS: '2',
      REDIS_URL: redis.url,
      UPSTREAM_URL: sandbox.url,
      LOG_LEVEL: 'debug',
      NODE_ENV: 'development',
      METRICS_PORT: String(metricsPort),
    },
    /gateway: (http:\/\/\S+)\/graphql/,
  );
});

/** One GraphQL request on a connection of its own, so that the cluster hands it to any worker. */
function freshConnectionQuery(url: string, query: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${url}/graphql`,
      {
        method: 'POST',
        agent: false,
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${DEMO_KEYS.acmeReadWrite}`,
          connection: 'close',
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify({ query }));
  });
}
afterAll(async () => {
  for (const started of [fleet, sandbox]) if (started.child.exitCode === null) started.child.kill('SIGKILL');
  captureProcessOutput('npm start, WORKERS=2', fleet.output());
  await redis.close();
});

const workers = () =>
  execFileSync('pgrep', ['-P', String(fleet.child.pid)], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .filter(Boolean)
    .map(Number);
const admin = (path: string) =>
  fetch(`${sandbox.url}/sandbox/v1${path}`, {
    headers: { authorization: `Bearer ${DEFAULT_ADMIN_TOKEN}` },
  }).then(async (r) => (await r.json()) as { data: { method: string; path: string }[] });

/** createWithdrawalIntent through one gateway (`url`), answering the intent's REST id or undefined. */
async function withdraw(url: string, walletId: string, idempotencyKey: string, amount = '0.01') {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${DEMO_KEYS.acmeReadWrite}` },
    body: JSON.stringify({
      query: `mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) {
        ... on CreateWithdrawalIntentSuccess { withdrawalIntent { restId } } } }`,
      variables: {
        input: {
          walletId,
          serviceFeeMode: 'EXCLUSIVE',
          currencyCode: 'USDT',
          amount,
          destination: { type: 'crypto', rail: 'tron', identifier: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7' },
          idempotencyKey,
        },
      },
    }),
  });
  const body = (await response.json()) as {
    data?: { createWithdrawalIntent?: { withdrawalIntent?: { restId: string } } };
  };
  return body.data?.createWithdrawalIntent?.withdrawalIntent?.restId;
}

/** The demo merchant's first wallet, read from the sandbox. */
async function firstWallet(): Promise<string> {
  const wallets = await fetch(`${sandbox.url}/external/v1/wallets?size=1`, {
    headers: { authorization: `Bearer ${DEMO_KEYS.acmeReadWrite}` },
  }).then(async (r) => (await r.json()) as { data: { id: string }[] });
  return wallets.data[0]?.id ?? '';
}

describe('WORKERS=2 with REDIS_URL', () => {
  it('runs two workers under one supervisor and announces one URL', () => {
    expect(workers()).toHaveLength(2);
    expect(fleet.output().match(/Merchant Wallet GraphQL gateway:/g)).toHaveLength(1);
  });

  it('500 concurrent submissions of one key over both workers: one POST, one intent', async () => {
    const walletId = await firstWallet();
    const ids = await Promise.all(
      Array.from({ length: 500 }, () => withdraw(fleet.url, walletId, 'workers-500')),
    );
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).toEqual(expect.any(String));
    const posts = (await admin('/requests')).data.filter((r) => r.method === 'POST');
    expect(posts).toHaveLength(1);
  });

  it('metrics are the fleet’s sums, on the supervisor’s METRICS_PORT', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      statuses.push(
        await freshConnectionQuery(fleet.url, 'query FleetCount { wallets(first: 1) { totalCount } }'),
      );
    }
    expect(statuses).toEqual(Array(20).fill(200));
    // Both workers answered some of them (each access-log line carries its process id).
    const pids = new Set(
      fleet
        .output()
        .split('\n')
        .filter((line) => line.includes('"operationName":"FleetCount"'))
        .map((line) => (JSON.parse(line) as { pid: number }).pid),
    );
    expect(pids.size).toBe(2);
    const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(scraped.status).toBe(200);
    const samples = parseMetrics(await scraped.text());
    expect(sampleSum(samples, 'gateway_graphql_requests_total', { operation_name: 'FleetCount' })).toBe(20);
    // Not on the public port.
    expect((await fetch(`${fleet.url}/metrics`)).status).toBe(404);
  });

  it('replaces a worker killed with SIGKILL, and keeps answering', async () => {
    const [victim] = workers();
    process.kill(victim as number, 'SIGKILL');
    await vi.waitFor(() => expect(workers().filter((pid) => pid !== victim)).toHaveLength(2), {
      timeout: 15_000,
      interval: 100,
    });
    const response = await fetch(`${fleet.url}/healthz`);
    expect(response.status).toBe(200);
  });

  it('drains and exits 0 on SIGTERM', async () => {
    fleet.child.kill('SIGTERM');
    expect(await fleet.exited).toBe(0);
  });
});

describe('a process killed while holding a claim', () => {
  // Its waits for the POST (20 s) and the replay (30 s) are far above what they take, past the
  // suite's 60 s.
  it('after the REST API created the intent: a replay on another process returns it, and no second POST is sent', {
    timeout: 90_000,
  }, async () => {
    // Two gateway processes of one fleet; short deadline and lease so the test waits seconds, not 20.
    // The holder's POST is sent only within its deadline: 4 s leaves a busy machine room for it.
    const env = {
      PORT: '0',
      REDIS_URL: redis.url,
      UPSTREAM_URL: sandbox.url,
      LOG_LEVEL: 'warn',
      REQUEST_DEADLINE_MS: '4000',
      IDEMPOTENCY_LEASE_MS: '5000',
    };
    const holder = await startProcess('src/main.ts', [], env, /gateway: (http:\/\/\S+)\/graphql/);
    const other = await startProcess('src/main.ts', [], env, /gateway: (http:\/\/\S+)\/graphql/);
    try {
      const walletId = await firstWallet();
      await fetch(`${sandbox.url}/sandbox/v1/requests`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${DEFAULT_ADMIN_TOKEN}` },
      });
      // The REST API creates the intent at once but answers only 25 s later.
      await fetch(`${sandbox.url}/sandbox/v1/faults`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEFAULT_ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          method: 'POST',
          path: '/external/v1/withdrawal-intents',
          respondAfterMs: 25_000,
          times: 1,
        }),
      });
      const send = (url: string) => withdraw(url, walletId, 'killed-holder', '0.02');
      void send(holder.url).catch(() => {});
      // The moment the POST reached the REST API, the holder dies without a word.
      await vi.waitFor(
        async () => expect((await admin('/requests')).data.some((r) => r.method === 'POST')).toBe(true),
        // Any time before the REST API answers (25 s): how soon the POST gets there depends on the machine.
        { timeout: 20_000, interval: 10 },
      );
      holder.child.kill('SIGKILL');
      const intents = await fetch(`${sandbox.url}/external/v1/withdrawal-intents?size=1`, {
        headers: { authorization: `Bearer ${DEMO_KEYS.acmeReadWrite}` },
      }).then(async (r) => (await r.json()) as { data: { id: string }[] });
      const created = intents.data[0]?.id;

      // The client retries on the other process, as OUTCOME_UNKNOWN tells it to, until it has an answer.
      let replayed: string | undefined;
      await vi.waitFor(
        async () => {
          replayed = await send(other.url);
          expect(replayed).toEqual(expect.any(String));
        },
        // The holder's window closes about 9 s after its POST (deadline, then late commit); the
        // rest is room for a busy machine.
        { timeout: 30_000, interval: 200 },
      );
      expect(replayed).toBe(created);
      expect((await admin('/requests')).data.filter((r) => r.method === 'POST')).toHaveLength(1);
    } finally {
      for (const started of [holder, other])
        if (started.child.exitCode === null) started.child.kill('SIGKILL');
      captureProcessOutput('killed holder', holder.output() + other.output());
    }
  });
});
