/**
 * `npm run bench -- --many-merchants [--keys 2000,20000] [--latency 0 --latency 5] [--rounds 3]
 * [--seconds 10] [--baseline DIR] [--profile DIR]`: a fleet's traffic, many merchants each asking
 * for its own screens, against the hand-written REST client (test/bench/optimal-server.ts).
 *
 * The sandbox gets KEYS_PER_MERCHANT keys per merchant (through the admin API), each merchant
 * WALLETS_PER_MERCHANT wallets, DEPOSITS_PER_WALLET deposits a wallet and INTENTS_PER_MERCHANT
 * withdrawal intents. Each request draws a key by Zipf (exponent 1) and a screen by MIX; a
 * withdrawal carries a new Idempotency-Key. Both latencies run on one sandbox (started at 0 ms;
 * 5 ms is an injected latency fault on every /external call), so both see the same world.
 *
 * Measured in one run, A/B alternated: each round measures the gateway, the hand-written client
 * and (with `--baseline`) another checkout's gateway, in an order that turns round by round, every
 * one of them on the same slice of the drawn mix. CPU per request is each process's own CPU time
 * (/proc) over the requests it answered. The figures are the medians over rounds, and the run ends
 * with the goals of the many-merchant mix, each with its figure. After each key count it reads the
 * gateway's RSS (/proc) and V8 heap (its /metrics): what the keys' state costs in memory.
 *
 * `--profile DIR` starts the gateway with `--cpu-prof` (written to DIR when it stops; summarise it
 * with `node test/bench/profile-summary.ts DIR/*.cpuprofile`); `--node-options='…'` gives it other
 * Node options, `--log-level info` its LOG_LEVEL and the baseline's (warn by default: no access log). `--heap-snapshots DIR` writes a heap snapshot of the gateway after each key count's
 * load (summarise two with `node test/bench/heap-summary.ts A B`). `--memory-limit MiB` also runs
 * a copy of the gateway in a cgroup v1 memory group of that size (root only).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, readdir, readFile, rename, rmdir, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import autocannon from 'autocannon';
import { DEFAULT_ADMIN_TOKEN } from '../../src/sandbox/config.ts';
import { startProcess } from '../support/process.ts';
import type { BenchKit } from './big-merchants.ts';
import { seededFloats, weightedPicker, zipfSampler } from './zipf.ts';

type Started = { child: ChildProcess; url: string };

const ADMIN = `Bearer ${DEFAULT_ADMIN_TOKEN}`;
const KEYS_PER_MERCHANT = 4;
const WALLETS_PER_MERCHANT = 2;
const DEPOSITS_PER_WALLET = 10;
const INTENTS_PER_MERCHANT = 2;
/** The share of each screen in the mix. */
const MIX = {
  dashboard: 30,
  walletScreen: 25,
  activityFeed: 20,
  withdrawalStatus: 20,
  withdrawal: 5,
} as const;
type Screen = keyof typeof MIX;
/** Idle time after the load before memory is read. */
const IDLE_BEFORE_MEMORY_MS = 20_000;
/** Requests drawn in advance; each round reads its own slice, the same for every process. */
const DRAWN = 200_000;

const DASHBOARD =
  '{ wallets(first: 20) { nodes { id address assets { currencyCode balance { availableAmount lockedAmount } } } } }';
const WALLET_SCREEN =
  'query($id: ID!) { wallet(id: $id) { address assets { currencyCode balance { availableAmount } } deposits(first: 10) { nodes { id amount status } } withdrawalIntents(first: 10) { nodes { id amount status } } } }';
const ACTIVITY_FEED = '{ deposits(first: 50) { nodes { id amount status createdAt wallet { address } } } }';
const WITHDRAWAL_STATUS = 'query($id: ID!) { withdrawalIntent(id: $id) { id amount status createdAt } }';
const WITHDRAW =
  'mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename } }';
const DESTINATION = { type: 'crypto', rail: 'tron', identifier: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7' };

interface Tenant {
  key: string;
  wallets: string[];
  intents: string[];
}

interface MixRequest {
  key: string;
  screen: Screen;
  wallet: string;
  intent: string;
}

interface Figures {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  cpuMsPerRequest: number | null;
  callsPerRequest: number;
  errors: number;
  requests: number;
}

interface Target {
  name: string;
  started: Started;
  request: (r: MixRequest) => {
    method: 'GET' | 'POST';
    path: string;
    headers: Record<string, string>;
    body?: string;
  };
}

const graphql = (query: string, variables: Record<string, unknown> = {}) =>
  JSON.stringify({ query, variables });

async function admin(sandboxURL: string, path: string, body: unknown, method = 'POST') {
  const response = await fetch(`${sandboxURL}/sandbox/v1${path}`, {
    method,
    headers: { authorization: ADMIN, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { data: Record<string, unknown> }).data;
}

async function upstreamCount(sandboxURL: string): Promise<number> {
  const response = await fetch(`${sandboxURL}/sandbox/v1/stats`, { headers: { authorization: ADMIN } });
  return ((await response.json()) as { data: { externalRequests: number } }).data.externalRequests;
}

/** The upstream count once it has not moved for 100 ms (at most 2 s). */
async function settledCount(sandboxURL: string): Promise<number> {
  let count = await upstreamCount(sandboxURL);
  for (let polls = 0; polls < 20; polls++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const next = await upstreamCount(sandboxURL);
    if (next === count) return count;
    count = next;
  }
  return count;
}

/** Runs `task` over `items`, `width` at a time. */
async function inParallel<T>(items: T[], width: number, task: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await task(items[next++] as T);
    }),
  );
}

/** Merchants with KEYS_PER_MERCHANT keys each (ranked: tenants[0] is the busiest under Zipf). */
async function buildTenants(sandboxURL: string, keyCount: number): Promise<Tenant[]> {
  const merchants = Math.ceil(keyCount / KEYS_PER_MERCHANT);
  const byMerchant: Tenant[][] = [];
  await inParallel(
    Array.from({ length: merchants }, (_, i) => i),
    16,
    async (m) => {
      const merchant = await admin(sandboxURL, '/merchants', {
        name: `Bench merchant ${m}`,
        withdrawalConfig: { fee: '1', dailyLimit: '100000000', monthlyLimit: '1000000000' },
      });
      const wallets: string[] = [];
      for (let w = 0; w < WALLETS_PER_MERCHANT; w++) {
        const wallet = await admin(sandboxURL, `/merchants/${merchant.id}/wallets`, {
          balances: { USDT: '1000000', TRX: '100' },
        });
        wallets.push(String(wallet.id));
        for (let d = 0; d < DEPOSITS_PER_WALLET; d++) {
          await admin(sandboxURL, `/wallets/${wallet.id}/deposits`, {
            currencyCode: 'USDT',
            amount: `${10 + d}.50`,
            amountFee: '0.10',
          });
        }
      }
      const keys: string[] = [];
      for (let k = 0; k < KEYS_PER_MERCHANT && m * KEYS_PER_MERCHANT + k < keyCount; k++) {
        const key = await admin(sandboxURL, `/merchants/${merchant.id}/api-keys`, {
          name: `bench ${k}`,
          access: 'read_write',
        });
        keys.push(`Bearer ${key.key}`);
      }
      const intents: string[] = [];
      for (let i = 0; i < INTENTS_PER_MERCHANT; i++) {
        const response = await fetch(`${sandboxURL}/external/v1/withdrawal-intents`, {
          method: 'POST',
          headers: { authorization: keys[0] as string, 'content-type': 'application/json' },
          body: JSON.stringify({
            senderWalletId: wallets[i % wallets.length],
            serviceFeeMode: 'exclusive',
            currencyCode: 'USDT',
            amount: '1.00',
            destination: DESTINATION,
          }),
        });
        const body = (await response.json()) as { data?: { id: string } };
        if (!response.ok || !body.data) throw new Error(`creating an intent: ${response.status}`);
        intents.push(body.data.id);
      }
      byMerchant[m] = keys.map((key) => ({ key, wallets, intents }));
    },
  );
  // Ranks interleave merchants, so the busiest keys belong to different merchants.
  const tenants: Tenant[] = [];
  for (let k = 0; k < KEYS_PER_MERCHANT; k++)
    for (const keys of byMerchant) {
      const tenant = keys?.[k];
      if (tenant) tenants.push(tenant);
    }
  return tenants;
}

function drawMix(tenants: Tenant[], count: number): MixRequest[] {
  const random = seededFloats(39);
  const rank = zipfSampler(tenants.length, 1, random);
  const screen = weightedPicker(MIX, random);
  return Array.from({ length: count }, () => {
    const tenant = tenants[rank()] as Tenant;
    const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)] as T;
    return { key: tenant.key, screen: screen(), wallet: pick(tenant.wallets), intent: pick(tenant.intents) };
  });
}

let idempotencySerial = 0;
const idempotencyKey = () => `bench-${process.pid}-${idempotencySerial++}`;

/** The gateway request of one drawn screen. */
function gatewayRequest(r: MixRequest) {
  const body =
    r.screen === 'dashboard'
      ? graphql(DASHBOARD)
      : r.screen === 'walletScreen'
        ? graphql(WALLET_SCREEN, { id: r.wallet })
        : r.screen === 'activityFeed'
          ? graphql(ACTIVITY_FEED)
          : r.screen === 'withdrawalStatus'
            ? graphql(WITHDRAWAL_STATUS, { id: r.intent })
            : graphql(WITHDRAW, {
                input: {
                  walletId: r.wallet,
                  serviceFeeMode: 'EXCLUSIVE',
                  currencyCode: 'USDT',
                  amount: '0.01',
                  destination: DESTINATION,
                  idempotencyKey: idempotencyKey(),
                },
              });
  return {
    method: 'POST' as const,
    path: '/graphql',
    headers: { authorization: r.key, 'content-type': 'application/json' },
    body,
  };
}

/** The hand-written client's request of one drawn screen (test/bench/optimal-server.ts). */
function optimalRequest(r: MixRequest) {
  const headers: Record<string, string> = { authorization: r.key };
  if (r.screen === 'withdrawal') {
    return {
      method: 'POST' as const,
      path: '/s4',
      headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': idempotencyKey() },
      body: JSON.stringify({
        senderWalletId: r.wallet,
        serviceFeeMode: 'exclusive',
        currencyCode: 'USDT',
        amount: '0.01',
        destination: DESTINATION,
      }),
    };
  }
  const path =
    r.screen === 'dashboard'
      ? '/s1'
      : r.screen === 'walletScreen'
        ? `/s3?wallet=${r.wallet}`
        : r.screen === 'activityFeed'
          ? '/s2'
          : `/s6?id=${r.intent}`;
  return { method: 'GET' as const, path, headers };
}

/** `seconds` of load on `target`, reading the mix from `from`; null figures for a warm-up. */
async function load(
  kit: BenchKit,
  sandboxURL: string,
  target: Target,
  mix: MixRequest[],
  from: number,
  seconds: number,
  connections: number,
  measured: boolean,
): Promise<Figures> {
  let drawn = from;
  let errors = 0;
  const times: number[] = [];
  const callsBefore = measured ? await settledCount(sandboxURL) : 0;
  const cpuBefore = await kit.cpuMs(target.started.child.pid);
  const instance = autocannon({
    url: target.started.url,
    connections,
    duration: seconds,
    requests: [
      {
        setupRequest: (request: object) => ({
          ...request,
          ...target.request(mix[drawn++ % mix.length] as MixRequest),
        }),
        onResponse: (status: number, body: string) => {
          if (status >= 400 || body.includes('"errors"')) errors++;
        },
      },
    ],
  } as unknown as autocannon.Options) as unknown as autocannon.Instance & Promise<autocannon.Result>;
  if (measured)
    instance.on('response', (_c: unknown, _s: number, _b: number, ms: number) => void times.push(ms));
  const result = await instance;
  const cpuAfter = await kit.cpuMs(target.started.child.pid);
  const callsAfter = measured ? await settledCount(sandboxURL) : 0;
  times.sort((a, b) => a - b);
  const total = result.requests.total;
  const at = (p: number) =>
    Number((times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0).toFixed(2));
  return {
    requestsPerSecond: Math.round(total / seconds),
    p50: at(0.5),
    p99: at(0.99),
    cpuMsPerRequest:
      cpuBefore !== null && cpuAfter !== null && total
        ? Number(((cpuAfter - cpuBefore) / total).toFixed(3))
        : null,
    callsPerRequest: total ? Number(((callsAfter - callsBefore) / total).toFixed(2)) : 0,
    errors: errors + result.errors,
    requests: total,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return 0;
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Each figure's median over rounds; errors and requests summed. */
function medianOf(runs: Figures[]): Figures {
  const m = (pick: (f: Figures) => number | null) => {
    const values = runs.map(pick).filter((v): v is number => v !== null);
    return values.length ? Number(median(values).toFixed(3)) : null;
  };
  return {
    requestsPerSecond: Math.round(m((f) => f.requestsPerSecond) ?? 0),
    p50: m((f) => f.p50) ?? 0,
    p99: m((f) => f.p99) ?? 0,
    cpuMsPerRequest: m((f) => f.cpuMsPerRequest),
    callsPerRequest: m((f) => f.callsPerRequest) ?? 0,
    errors: runs.reduce((sum, f) => sum + f.errors, 0),
    requests: runs.reduce((sum, f) => sum + f.requests, 0),
  };
}

/** A process's resident set (MB, /proc) and, for a gateway, its V8 heap in use (MB, its /metrics). */
async function memoryOf(started: Started, gateway: boolean) {
  const status = await readFile(`/proc/${started.child.pid}/status`, 'utf8').catch(() => '');
  const rss = /VmRSS:\s+(\d+) kB/.exec(status);
  let heap: number | null = null;
  let hotPathShare: number | null = null;
  if (gateway) {
    const text = await fetch(`${started.url}/metrics`).then(
      (r) => r.text(),
      () => '',
    );
    const used = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
    heap = used ? Math.round(Number(used[1]) / 1e6) : null;
    const served = Number(/^gateway_hot_path_total\{outcome="served"\} (\S+)$/m.exec(text)?.[1] ?? 0);
    let requests = 0;
    for (const match of text.matchAll(/^gateway_graphql_requests_total\{[^}]*\} (\S+)$/gm))
      requests += Number(match[1]);
    if (requests > 0) hotPathShare = Number((served / requests).toFixed(3));
  }
  return {
    rssMB: rss ? Math.round(Number(rss[1]) / 1024) : null,
    heapMB: heap,
    ...(hotPathShare !== null && { hotPathShare }),
  };
}

/** A heap snapshot of `started` (run with --heapsnapshot-signal=SIGUSR2), renamed to `<dir>/<name>.heapsnapshot`. */
async function heapSnapshot(started: Started, dir: string, name: string): Promise<void> {
  const before = new Set(await readdir(dir).catch(() => []));
  started.child.kill('SIGUSR2');
  for (let waited = 0; waited < 120_000; waited += 500) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const written = (await readdir(dir)).find((file) => file.endsWith('.heapsnapshot') && !before.has(file));
    if (!written) continue;
    // Written when its size stops changing.
    const size = async () => (await stat(`${dir}/${written}`)).size;
    let last = -1;
    for (let now = await size(); now !== last; now = await size()) {
      last = now;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    await rename(`${dir}/${written}`, `${dir}/${name}.heapsnapshot`);
    console.log(`heap snapshot: ${dir}/${name}.heapsnapshot`);
    return;
  }
  console.log('no heap snapshot was written within 2 minutes');
}

/**
 * Moves a started process into a new cgroup v1 memory group limited to `mb` MiB (what a
 * container's memory limit is), and returns the group's directory.
 */
async function limitMemory(started: Started, mb: number): Promise<string> {
  const dir = `/sys/fs/cgroup/memory/mwg-bench-${started.child.pid}`;
  await mkdir(dir, { recursive: true });
  await writeFile(`${dir}/memory.limit_in_bytes`, String(mb * 1024 * 1024));
  // No swap beyond the limit, where the kernel has that knob.
  await writeFile(`${dir}/memory.memsw.limit_in_bytes`, String(mb * 1024 * 1024)).catch(() => undefined);
  await writeFile(`${dir}/cgroup.procs`, String(started.child.pid));
  return dir;
}

/** The group's peak memory (MiB), how often it hit its limit, whether the kernel killed the process. */
async function cgroupFigures(dir: string, started: Started) {
  const read = (name: string) => readFile(`${dir}/${name}`, 'utf8').catch(() => '');
  const oom = await read('memory.oom_control');
  return {
    peakMB: Math.round(Number(await read('memory.max_usage_in_bytes')) / 1024 / 1024),
    limitHits: Number((await read('memory.failcnt')).trim() || 0),
    oomKills: Number(/oom_kill (\d+)/.exec(oom)?.[1] ?? 0),
    alive: started.child.exitCode === null && started.child.signalCode === null,
  };
}

interface Memory {
  keys: number;
  name: string;
  rssMB: number | null;
  heapMB: number | null;
  /** Of the gateway's GraphQL requests since it started, the share the hot path answered. */
  hotPathShare?: number;
  limit?: { peakMB: number; limitHits: number; oomKills: number; alive: boolean };
}

interface Row {
  keys: number;
  latency: number;
  figures: Record<string, Figures>;
  rounds: Record<string, Figures[]>;
}

export async function manyMerchants(kit: BenchKit): Promise<void> {
  const keyCounts = String(kit.values.keys ?? '2000')
    .split(',')
    .map((k) => Number(k.trim().replace(/k$/i, '000')));
  const latencies = (kit.values.latency as string[] | undefined)?.map(Number) ?? [0, 5];
  const seconds = kit.values.seconds ? Number(kit.values.seconds) : kit.quick ? 2 : 10;
  const warmup = kit.values.warmup ? Number(kit.values.warmup) : kit.quick ? 2 : 10;
  const rounds = Math.max(1, Number(kit.values.rounds ?? (kit.quick ? 1 : 3)));
  const connections = Number(kit.values.connections ?? 16);
  const baselineDir = kit.values.baseline as string | undefined;
  const profileDir = kit.values.profile as string | undefined;
  const snapshotDir = kit.values['heap-snapshots'] as string | undefined;
  const memoryLimitMB = kit.values['memory-limit'] ? Number(kit.values['memory-limit']) : undefined;
  const rows: Row[] = [];
  const memory: Memory[] = [];
  for (const keyCount of keyCounts) {
    const sandbox = await kit.startBenchSandbox(['--latency', '0', '--wallets', '1']);
    kit.pinElsewhere(sandbox.child.pid);
    console.log(`many merchants: creating ${keyCount} keys…`);
    const tenants = await buildTenants(sandbox.url, keyCount);
    const mix = drawMix(tenants, DRAWN);
    const nodeOptions = [
      ...(profileDir ? [`--cpu-prof --cpu-prof-dir=${profileDir}`] : []),
      ...(snapshotDir ? [`--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${snapshotDir}`] : []),
      ...(kit.values['node-options'] ? [kit.values['node-options'] as string] : []),
    ].join(' ');
    const logLevel = kit.values['log-level'] as string | undefined;
    const gateway = await kit.startBenchGateway(sandbox.url, {
      ...(nodeOptions && { NODE_OPTIONS: nodeOptions }),
      ...(logLevel && { LOG_LEVEL: logLevel }),
    });
    kit.pinUnderTest(gateway.child.pid);
    const baseline = baselineDir
      ? await kit.startBenchGateway(sandbox.url, logLevel ? { LOG_LEVEL: logLevel } : {}, baselineDir)
      : undefined;
    kit.pinUnderTest(baseline?.child.pid);
    const limited = memoryLimitMB
      ? await kit.startBenchGateway(sandbox.url, nodeOptions ? { NODE_OPTIONS: nodeOptions } : {})
      : undefined;
    kit.pinUnderTest(limited?.child.pid);
    const cgroup = limited ? await limitMemory(limited, memoryLimitMB as number) : undefined;
    const optimal = await startProcess(
      'test/bench/optimal-server.ts',
      [],
      { LOG_LEVEL: 'warn', UPSTREAM_URL: sandbox.url, NODE_ENV: 'production' },
      /optimal client at (http:\/\/\S+)/,
    );
    kit.pinUnderTest(optimal.child.pid);
    const targets: Target[] = [
      { name: 'gateway', started: gateway, request: gatewayRequest },
      { name: 'hand-written client', started: optimal, request: optimalRequest },
      ...(baseline ? [{ name: 'baseline gateway', started: baseline, request: gatewayRequest }] : []),
      ...(limited
        ? [{ name: `gateway in ${memoryLimitMB} MiB`, started: limited, request: gatewayRequest }]
        : []),
    ];
    try {
      for (const latency of latencies) {
        await admin(sandbox.url, '/faults', undefined, 'DELETE');
        if (latency > 0)
          await admin(sandbox.url, '/faults', { path: '/external/', latencyMs: latency, times: null });
        for (const target of targets)
          await load(kit, sandbox.url, target, mix, 0, warmup, connections, false);
        const byTarget: Record<string, Figures[]> = Object.fromEntries(targets.map((t) => [t.name, []]));
        for (let round = 0; round < rounds; round++) {
          // The order turns each round, so the machine's drift falls on every process alike.
          const order = targets.map((_, i) => targets[(i + round) % targets.length] as Target);
          const from = (round + 1) * 30_000;
          for (const target of order) {
            const figures = await load(kit, sandbox.url, target, mix, from, seconds, connections, true);
            byTarget[target.name]?.push(figures);
            console.log(JSON.stringify({ keys: keyCount, latency, round, target: target.name, ...figures }));
          }
        }
        rows.push({
          keys: keyCount,
          latency,
          rounds: byTarget,
          figures: Object.fromEntries(Object.entries(byTarget).map(([name, runs]) => [name, medianOf(runs)])),
        });
      }
      await new Promise((resolve) => setTimeout(resolve, IDLE_BEFORE_MEMORY_MS));
      if (snapshotDir) await heapSnapshot(gateway, snapshotDir, `${keyCount}-keys`);
      for (const target of targets)
        memory.push({
          keys: keyCount,
          name: target.name,
          ...(await memoryOf(target.started, target.name !== 'hand-written client')),
          ...(target.started === limited && cgroup && { limit: await cgroupFigures(cgroup, limited) }),
        });
    } finally {
      // A process the kernel killed has exited already.
      if (limited && limited.child.signalCode === null) await kit.stop(limited.child);
      if (cgroup) await rmdir(cgroup).catch(() => undefined);
      await kit.stop(optimal.child);
      if (baseline) await kit.stop(baseline.child);
      await kit.stop(gateway.child);
      await kit.stop(sandbox.child);
    }
  }
  await report(kit, rows, memory, { seconds, warmup, rounds, connections, baselineDir });
}

const ratio = (a: number | null | undefined, b: number | null | undefined) =>
  a !== null && a !== undefined && b ? a / b : null;
const times = (r: number | null) => (r === null ? 'n/a' : `×${r.toFixed(2)}`);

async function report(
  kit: BenchKit,
  rows: Row[],
  memory: Memory[],
  run: {
    seconds: number;
    warmup: number;
    rounds: number;
    connections: number;
    baselineDir: string | undefined;
  },
) {
  const lines = [
    '# Many merchants',
    '',
    `${new Date().toISOString()}; ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'CPU'}, Node ${process.version}. ${KEYS_PER_MERCHANT} keys per merchant, ${WALLETS_PER_MERCHANT} wallets, ${WALLETS_PER_MERCHANT * DEPOSITS_PER_WALLET} deposits and ${INTENTS_PER_MERCHANT} intents each; keys drawn by Zipf (exponent 1), screens by ${Object.entries(
      MIX,
    )
      .map(([s, w]) => `${s} ${w} %`)
      .join(
        ', ',
      )} (withdrawals with a new Idempotency-Key each); ${run.connections} connections; ${run.warmup} s warm-up, then ${run.rounds} alternating rounds of ${run.seconds} s, medians; every process in production mode, the gateway with its defaults; ${kit.pinned ? 'the process under test pinned to core 0, sandbox and load to core 1' : 'not pinned'}.`,
    '',
    '| keys | latency | process | req/s | p50 ms | p99 ms | CPU ms / request | REST calls / request | errors / requests |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const row of rows)
    for (const [name, f] of Object.entries(row.figures))
      lines.push(
        `| ${row.keys.toLocaleString('en')} | ${row.latency} ms | ${name} | ${f.requestsPerSecond} | ${f.p50} | ${f.p99} | ${f.cpuMsPerRequest ?? 'n/a'} | ${f.callsPerRequest} | ${f.errors} / ${f.requests} |`,
      );
  lines.push(
    '',
    '| keys | latency | gateway ÷ hand-written | req/s | p50 | p99 | CPU / request | CPU / request, each round |',
    '|---|---|---|---|---|---|---|---|',
  );
  const goals: string[] = [];
  for (const row of rows) {
    const compare = (name: string, other: string) => {
      const a = row.figures[name];
      const b = row.figures[other];
      const perRound = (row.rounds[name] ?? [])
        .map((f, i) => times(ratio(f.cpuMsPerRequest, row.rounds[other]?.[i]?.cpuMsPerRequest)))
        .join(', ');
      return { a, b, perRound };
    };
    const { a, b, perRound } = compare('gateway', 'hand-written client');
    const rps = ratio(a?.requestsPerSecond, b?.requestsPerSecond);
    const cpu = ratio(a?.cpuMsPerRequest, b?.cpuMsPerRequest);
    const p99 = ratio(a?.p99, b?.p99);
    lines.push(
      `| ${row.keys.toLocaleString('en')} | ${row.latency} ms | this gateway | ${times(rps)} | ${times(ratio(a?.p50, b?.p50))} | ${times(p99)} | ${times(cpu)} | ${perRound} |`,
    );
    if (row.figures['baseline gateway']) {
      const base = compare('baseline gateway', 'hand-written client');
      lines.push(
        `| ${row.keys.toLocaleString('en')} | ${row.latency} ms | baseline gateway | ${times(ratio(base.a?.requestsPerSecond, base.b?.requestsPerSecond))} | ${times(ratio(base.a?.p50, base.b?.p50))} | ${times(ratio(base.a?.p99, base.b?.p99))} | ${times(ratio(base.a?.cpuMsPerRequest, base.b?.cpuMsPerRequest))} | ${base.perRound} |`,
      );
    }
    const at = `${row.keys.toLocaleString('en')} keys, ${row.latency} ms`;
    const goal = (label: string, value: number | null, target: number, floor: number, atMost: boolean) => {
      const meets = (limit: number) => value !== null && (atMost ? value <= limit : value >= limit);
      const verdict = meets(target) ? 'goal met' : meets(floor) ? 'floor met, goal not' : 'below the floor';
      goals.push(
        `- ${at}: ${label} ${times(value)} (goal ${atMost ? '≤' : '≥'} ${target}, floor ${floor}): **${verdict}**`,
      );
    };
    goal('CPU per request', cpu, 1.0, 1.25, true);
    goal('req/s', rps, 1.0, 0.8, false);
    goal('p99', p99, 1.2, 1.2, true);
  }
  if (rows.some((r) => r.figures['baseline gateway'])) {
    lines.push(
      '',
      `Against the baseline checkout (${run.baselineDir}), same run, same sandbox:`,
      '',
      '| keys | latency | req/s, this ÷ baseline | p50 | p99 | CPU / request | CPU / request, each round |',
      '|---|---|---|---|---|---|---|',
    );
    for (const row of rows) {
      const a = row.figures.gateway;
      const b = row.figures['baseline gateway'];
      const perRound = (row.rounds.gateway ?? [])
        .map((f, i) => times(ratio(f.cpuMsPerRequest, row.rounds['baseline gateway']?.[i]?.cpuMsPerRequest)))
        .join(', ');
      lines.push(
        `| ${row.keys.toLocaleString('en')} | ${row.latency} ms | ${times(ratio(a?.requestsPerSecond, b?.requestsPerSecond))} | ${times(ratio(a?.p50, b?.p50))} | ${times(ratio(a?.p99, b?.p99))} | ${times(ratio(a?.cpuMsPerRequest, b?.cpuMsPerRequest))} | ${perRound} |`,
      );
    }
  }
  lines.push(
    '',
    `Memory after the load and ${IDLE_BEFORE_MEMORY_MS / 1000} s idle; the heap in use is garbage included, except with --heap-snapshots, whose snapshot collects it first:`,
    '',
    '| keys | process | RSS MB | V8 heap used MB | hot path share | in a memory group: peak MiB, times at its limit, OOM kills, alive at the end |',
    '|---|---|---|---|---|---|',
  );
  for (const m of memory)
    lines.push(
      `| ${m.keys.toLocaleString('en')} | ${m.name} | ${m.rssMB ?? 'n/a'} | ${m.heapMB ?? 'n/a'} | ${m.hotPathShare ?? ''} | ${m.limit ? `${m.limit.peakMB}, ${m.limit.limitHits}, ${m.limit.oomKills}, ${m.limit.alive ? 'yes' : '**no**'}` : ''} |`,
    );
  for (const row of rows) {
    const limitedName = Object.keys(row.figures).find((name) => name.startsWith('gateway in '));
    if (!limitedName) continue;
    const r = ratio(row.figures[limitedName]?.requestsPerSecond, row.figures.gateway?.requestsPerSecond);
    goals.push(
      `- ${row.keys.toLocaleString('en')} keys, ${row.latency} ms: ${limitedName} ÷ without a limit, req/s ${times(r)} (goal ≥ 0.9): **${r !== null && r >= 0.9 ? 'goal met' : 'below'}**`,
    );
  }
  lines.push('', '## Goals (gateway ÷ hand-written client)', '', ...goals);
  const markdown = lines.join('\n');
  const dir = new URL('./results/', import.meta.url);
  await mkdir(dir, { recursive: true });
  const name = run.baselineDir ? 'many-merchants-partial' : 'many-merchants';
  await writeFile(new URL(`${name}.md`, dir), `${markdown}\n`);
  await writeFile(new URL(`${name}.json`, dir), `${JSON.stringify({ rows, memory }, null, 2)}\n`);
  console.log(`\n${markdown}`);
}
