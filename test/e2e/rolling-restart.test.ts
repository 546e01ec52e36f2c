import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { type GatewayProcess, startGatewayProcess } from '../support/fleet-process.ts';
import { startHaproxy } from '../support/haproxy.ts';
import { freePort } from '../support/process.ts';
import { type RunningRedis, startRedis } from '../support/redis.ts';
import { EXTERNAL_TRON_ADDRESS, startTestSandbox, type TestSandbox } from '../support/sandbox.ts';
import { captureProcessOutput, recordSuiteKey } from '../support/suite-logs.ts';

/**
 * Rolling restarts behind the repository's load-balancer example, ops/haproxy/haproxy.cfg, run as
 * it is: two gateway processes sharing one Redis, in front of a REST API that does not deduplicate
 * (so only the gateway's own store keeps a key to one intent), restarted one after the other
 * (SIGTERM, wait for the exit, start again on the same port, wait until haproxy has it back)
 * while clients send queries and keyed withdrawals through haproxy without pause.
 *
 * The gateways run with the production default of SHUTDOWN_GRACE_MS, except where a test says
 * why not, and REDIS_TIMEOUT_MS at its largest (see startFleet). The tests count what the clients
 * saw; they assert no timing.
 */

const GRACE_MS = parseConfig({
  NODE_ENV: 'production',
  UPSTREAM_URL: 'https://api.example.com',
}).shutdownGraceMs;

let redis: RunningRedis;
let sandbox: TestSandbox;
let key: string;
let walletId: string;

beforeAll(async () => {
  redis = await startRedis();
  sandbox = await startTestSandbox();
  sandbox.sandbox.idempotencyExtension = false;
  const merchant = await sandbox.world.merchant();
  key = merchant.key;
  recordSuiteKey(key);
  walletId = (await sandbox.world.wallet(merchant.id, { USDT: '1000000', TRX: '10' })).id;
});
afterAll(async () => {
  await sandbox?.close();
  await redis?.close();
});

/** Two gateways on ports of their own (a restarted one comes back on its port) and haproxy in front. */
async function startFleet(options: { redispatch: boolean; graceMs?: number }) {
  const env = {
    REDIS_URL: redis.url,
    SHUTDOWN_GRACE_MS: String(options.graceMs ?? GRACE_MS),
    // What is tested is the restart, not a slow Redis: on a machine busy enough (the whole suite
    // beside two CPU hogs), the test's redis-server answered past the default 500 ms and 14
    // withdrawals were refused unsent (STORE_UNAVAILABLE), the right answer to a Redis that slow.
    // A quarter of the request deadline, the most the configuration allows.
    REDIS_TIMEOUT_MS: '3750',
  };
  const ports = [await freePort(), await freePort()];
  const start = (port: number) => startGatewayProcess(sandbox.url, { ...env, PORT: String(port) });
  const gateways: GatewayProcess[] = await Promise.all(ports.map(start));
  const lb = await startHaproxy({ backends: gateways.map((g) => g.url), redispatch: options.redispatch });
  await lb.waitForStates(['UP', 'UP']);
  const label = options.redispatch ? 'with redispatch' : 'without redispatch';
  let restarts = 0;
  return {
    gateways,
    lb,
    /** SIGTERM to replica `i`, its exit awaited, the same replica started again, and haproxy sending to it again. */
    async restart(i: number): Promise<number | null> {
      const old = gateways[i] as GatewayProcess;
      old.child.kill('SIGTERM');
      const code = await old.exited;
      captureProcessOutput(`rolling restart ${label}: gateway ${i + 1} (run ${++restarts})`, old.output());
      gateways[i] = await start(ports[i] as number);
      await lb.waitForStates(['UP', 'UP']);
      return code;
    },
    async stop() {
      await lb.stop();
      captureProcessOutput(`rolling restart ${label}: haproxy`, lb.output());
      gateways.forEach((g, i) => {
        g.stop(`rolling restart ${label}: gateway ${i + 1} (last run)`);
      });
    },
  };
}

interface Load {
  /** Requests answered so far. */
  answered(): number;
  /** Ends the load once the requests under way are answered. */
  stop(): Promise<{
    answered: number;
    /** Every request that did not get a 200 with data and no errors: how it failed. */
    failures: string[];
    statuses: Record<number, number>;
    /** For each idempotency key, the intents its answers named. */
    intentsByKey: Map<string, Set<string>>;
  }>;
}

const WALLETS = '{ wallets(first: 5) { totalCount nodes { id } } }';
const WITHDRAW = `mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) {
  __typename ... on CreateWithdrawalIntentSuccess { withdrawalIntent { restId } } } }`;

/**
 * `clients` loops, each sending through `url`, one after another: a query, then a keyed
 * withdrawal sent twice (the second as a client's retry would be), and again.
 */
function steadyLoad(url: string, clients = 4): Load {
  let running = true;
  let answered = 0;
  const failures: string[] = [];
  const statuses: Record<number, number> = {};
  const intentsByKey = new Map<string, Set<string>>();

  const send = async (query: string, variables: Record<string, unknown>) => {
    try {
      const response = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query, variables }),
        signal: AbortSignal.timeout(30_000),
      });
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      const text = await response.text();
      answered++;
      // biome-ignore lint/suspicious/noExplicitAny: the body is checked field by field
      let body: any;
      try {
        body = JSON.parse(text);
      } catch {}
      if (response.status !== 200 || !body?.data || body.errors) {
        failures.push(`${response.status}: ${text.slice(0, 300)}`);
        return undefined;
      }
      return body.data;
    } catch (error) {
      failures.push(`no answer: ${(error as Error).message} ${String((error as Error).cause ?? '')}`);
      return undefined;
    }
  };

  const client = async () => {
    while (running) {
      await send(WALLETS, {});
      const idempotencyKey = randomUUID();
      const input = {
        walletId,
        serviceFeeMode: 'EXCLUSIVE',
        currencyCode: 'USDT',
        amount: '0.01',
        destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS },
        idempotencyKey,
      };
      const intents = new Set<string>();
      intentsByKey.set(idempotencyKey, intents);
      for (let attempt = 0; attempt < 2; attempt++) {
        const data = await send(WITHDRAW, { input });
        const restId = data?.createWithdrawalIntent?.withdrawalIntent?.restId;
        if (data && !restId) failures.push(`no intent: ${JSON.stringify(data)}`);
        if (restId) intents.add(restId);
      }
    }
  };
  const loops = Array.from({ length: clients }, client);
  return {
    answered: () => answered,
    async stop() {
      running = false;
      await Promise.all(loops);
      return { answered, failures, statuses, intentsByKey };
    },
  };
}

/** The merchant's intents as the REST API counts them. */
async function intentCount(): Promise<number> {
  const { body } = await sandbox.call('GET', '/external/v1/withdrawal-intents?size=1', { key });
  return body.paging.totalCount as number;
}

/**
 * The rolling restart under load: each replica in turn, with requests answered while each was
 * away. Returns what the clients saw and the replicas' exit codes.
 */
async function rollingRestart(fleet: Awaited<ReturnType<typeof startFleet>>) {
  const intentsBefore = await intentCount();
  const load = steadyLoad(fleet.lb.url);
  const answeredDuring: number[] = [];
  const exitCodes: (number | null)[] = [];
  // Load on both before the first goes.
  await waitForAnswers(load, 20);
  for (const i of [0, 1]) {
    const before = load.answered();
    exitCodes.push(await fleet.restart(i));
    answeredDuring.push(load.answered() - before);
    await waitForAnswers(load, 20);
  }
  const result = await load.stop();
  const intentsAfter = await intentCount();
  return { ...result, answeredDuring, exitCodes, intentsMade: intentsAfter - intentsBefore };
}

describe('a rolling restart behind haproxy (ops/haproxy/haproxy.cfg)', () => {
  let fleet: Awaited<ReturnType<typeof startFleet>> | undefined;
  afterAll(() => fleet?.stop());

  it('with the documented settings: no failed request, and exactly one intent per idempotency key', async () => {
    fleet = await startFleet({ redispatch: true });
    // Which store: the fleet's Redis, named on /readyz.
    expect((await fleet.gateways[0]?.probe('/readyz'))?.body).toMatchObject({
      status: 'ready',
      store: 'redis (one server)',
    });
    const run = await rollingRestart(fleet);
    expectNoLoss(run);
    await fleet.stop();
    fleet = undefined;
  }, 180_000);

  it('without option redispatch, the grace period alone keeps every request answered: no 503', async () => {
    // haproxy needs two failed checks a second apart (about 2 s) to stop sending to a replica; the
    // default grace leaves 3 s over that, which haproxy and the gateway sharing a busy machine can
    // use up. Twice the default still shows the grace is what keeps requests answered: a replica
    // that did not fail /readyz during it, or closed its listener early, still causes 503s.
    fleet = await startFleet({ redispatch: false, graceMs: 2 * GRACE_MS });
    const run = await rollingRestart(fleet);
    expect(run.statuses[503]).toBeUndefined();
    expectNoLoss(run);
    // Each replica left haproxy by failing /readyz while it still listened, not by refusing connections.
    const log = fleet.lb.output();
    for (const server of ['gateway1', 'gateway2']) {
      expect(log).toMatch(
        new RegExp(`Server gateways/${server} is DOWN, reason: Layer7 wrong status, code: 503`),
      );
      expect(log).not.toMatch(new RegExp(`Server gateways/${server} is DOWN, reason: Layer4`));
    }
    await fleet.stop();
    fleet = undefined;
  }, 180_000);
});

function expectNoLoss(run: Awaited<ReturnType<typeof rollingRestart>>): void {
  console.log(
    `Rolling restart: ${run.answered} requests (${JSON.stringify(run.statuses)}), ${run.intentsByKey.size} keys, ` +
      `${run.answeredDuring.join(' and ')} answered while each replica was away, ${run.failures.length} failed`,
  );
  expect(run.failures).toEqual([]);
  expect(run.exitCodes).toEqual([0, 0]);
  // The load went on through each restart: a few seconds of it, so answers for each client at least,
  // however slow the machine (a count of answers in a span of time would measure its speed).
  for (const answered of run.answeredDuring) expect(answered).toBeGreaterThanOrEqual(4);
  const keys = [...run.intentsByKey.values()];
  expect(keys.length).toBeGreaterThan(20);
  // Each key named one intent, twice; no two keys named the same; and the REST API made no other.
  expect(keys.filter((intents) => intents.size !== 1)).toEqual([]);
  const intents = new Set(keys.flatMap((set) => [...set]));
  expect(intents.size).toBe(keys.length);
  expect(run.intentsMade).toBe(keys.length);
}

async function waitForAnswers(load: Load, count: number): Promise<void> {
  const target = load.answered() + count;
  const giveUpAt = Date.now() + 30_000;
  while (load.answered() < target) {
    if (Date.now() > giveUpAt) throw new Error(`fewer than ${count} requests answered in 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
