/**
 * `npm run bench` (`-- --quick` for a run under a minute): the gateway against a hand-written
 * optimal REST client, side by side in one run, on the same sandbox world, at 0 ms and 5 ms of
 * injected upstream latency. Each is its own process: sandbox, gateway, optimal client; autocannon
 * drives them from this one. Writes test/bench/results/latest.{json,md}.
 *
 * On a machine with two or more cores and `taskset` (util-linux), the process under test (gateway,
 * then optimal client, never both at once) is pinned to core 0 and everything else (sandbox, this
 * process with autocannon) to core 1, so the two are compared on the same dedicated core rather
 * than fighting the load generator; `--no-pin` turns it off. Latency percentiles come from every
 * response's own time (sub-millisecond), not autocannon's whole-millisecond histogram, which would
 * make 8 ms against 9 ms a 12 % step.
 *
 * Every process runs as deployed, with NODE_ENV=production: the gateway, the optimal client and
 * the generated peer. The gateway is measured twice per screen: with its defaults (micro-cache,
 * coalescing of identical in-flight GETs, query deduplication, compiled execution: "defaults"),
 * and with its sharing off (UPSTREAM_CACHE_TTL_MS=0, QUERY_DEDUPLICATION=false: "sharing off"),
 * which is what one request costs on its own, every request calling the REST API as the optimal
 * client does. Every autocannon request of a screen is identical, which flatters the defaults;
 * ten merchants' different dashboards would see the "sharing off" figures.
 *
 * The generated peer (test/bench/peer.ts: GraphQL Mesh over an OpenAPI description of the REST
 * API, served by Hive Gateway) answers S1–S3 too; `--no-peer` leaves it out (its first run
 * installs its own dependencies, about 20 s).
 *
 * The run ends with the issue's goals, each with its figure from this run: S1 and S2 at ≥ 0.8× the
 * optimal client's req/s at 0 ms; p50 ≤ 1.10× and p99 ≤ 1.25× at 5 ms for S1–S3; the defaults
 * never slower than sharing off; ≥ 3× the peer's req/s.
 *
 * `--baseline DIR` also starts the gateway of another checkout of this project (DIR, with its
 * dependencies installed; e.g. `git worktree add /tmp/base <commit> && (cd /tmp/base && npm ci)`)
 * and measures it in the same run, on the same sandbox, one scenario after the other: the
 * "vs baseline" ratios are how a change compares with the code before it, on the same noisy machine.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { WALKS_PER_KEY } from '../../src/plugins/cost-limit.ts';
import { DEFAULT_ADMIN_TOKEN } from '../../src/sandbox/config.ts';
import { CALLS_PER_KEY, CALLS_PER_KEY_PER_SECOND } from '../../src/upstream/transport.ts';
import { freePort, startProcess } from '../support/process.ts';
import { type PeerScreen, peerRequestBody, startPeer } from './peer.ts';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    connections: { type: 'string', default: '16' },
    /** Leaves the generated peer (Mesh + Hive Gateway) out. */
    'no-peer': { type: 'boolean', default: false },
    'no-pin': { type: 'boolean', default: false },
    /** Only the scenarios whose name starts with one of these, e.g. `--only S1 --only S3`. */
    only: { type: 'string', multiple: true },
    /** Only these upstream latencies (ms), e.g. `--latency 5`. */
    latency: { type: 'string', multiple: true },
    /** Another checkout of this project, whose gateway is measured beside this one. */
    baseline: { type: 'string' },
    /** With --baseline: this many alternating rounds (this, baseline; baseline, this; …), medians compared. */
    rounds: { type: 'string' },
    /** Seconds of load per measurement (10, or 1 with --quick): many short rounds follow drift more closely. */
    seconds: { type: 'string' },
    /** --many-merchants: seconds of warm-up per process before the rounds (10; 2 with --quick). */
    warmup: { type: 'string' },
    /** The fleet runs instead: S1 and S4 with in-process stores, Redis (without and with WAIT), Cluster, and WORKERS=2. */
    fleet: { type: 'boolean', default: false },
    /** Only the store's part of the fleet run: what the WAIT costs a withdrawal's Redis writes. */
    store: { type: 'boolean', default: false },
    /** What metrics and tracing cost runs instead: S1 with metrics off, on, and tracing at 100 %. */
    observability: { type: 'boolean', default: false },
    /**
     * A noisy neighbour runs instead: another merchant's wallet screen alone, then while a merchant
     * with 100 000 deposits sends whole-list walks as fast as it can, for each key's share of the
     * REST API off and on (`--share 0 --share 4 …`; default 0, 1, 2, 4, 8).
     */
    neighbour: { type: 'boolean', default: false },
    share: { type: 'string', multiple: true },
    /**
     * With --neighbour: each key's pace (expensive calls per second) to compare beside the
     * defaults, each with the default share and walks (`--pace 0 --pace 5`; default none).
     */
    pace: { type: 'string', multiple: true },
    /** With --neighbour: every walk the same (no status filter), so identical calls in flight coalesce. */
    'same-walk': { type: 'boolean', default: false },
    /** Each screen's cost against the merchant's history size instead (test/bench/big-merchants.ts). */
    history: { type: 'boolean', default: false },
    /** With --history: the sizes (deposits), e.g. `--sizes 1k,10k`; default 1k,10k,100k (and 1M with --big). */
    sizes: { type: 'string' },
    big: { type: 'boolean', default: false },
    /** With --history: seconds to wait before the second round (the background index's warm-up). */
    warm: { type: 'string' },
    /** With --history: sequential requests per screen (default 30). */
    requests: { type: 'string' },
    /** Compression and conditional GETs instead: bytes, CPU and req/s per screen, identity, gzip and br (test/bench/delivery.ts). */
    delivery: { type: 'boolean', default: false },
    /** Thousands of keys and a Zipf mix of screens instead (test/bench/big-merchants.ts). */
    'many-merchants': { type: 'boolean', default: false },
    /** With --many-merchants: how many keys, comma-separated (default 2000; e.g. `--keys 2000,20000`). */
    keys: { type: 'string' },
    /** With --many-merchants: the gateway runs with --cpu-prof, its profile written to this directory. */
    profile: { type: 'string' },
    /**
     * With --many-merchants: also measure this checkout's gateway in a memory cgroup of this many
     * MiB (cgroup v1, as a container's limit; root only), beside the same gateway without a limit.
     */
    'memory-limit': { type: 'string' },
    /** With --many-merchants: a heap snapshot of this checkout's gateway after each key count's load, into this directory. */
    'heap-snapshots': { type: 'string' },
    /** With --many-merchants: LOG_LEVEL of this checkout's gateway (default warn: no access log), e.g. `info` as production. */
    'log-level': { type: 'string' },
    /** With --many-merchants: NODE_OPTIONS for this checkout's gateway, e.g. `--heapsnapshot-signal=SIGUSR2`. */
    'node-options': { type: 'string' },
  },
});
const quick = values.quick ?? false;
const duration = values.seconds ? Number(values.seconds) : quick ? 1 : 10;
/**
 * Seconds of load before each measurement. By time, not by count: after 500 requests (or 3 s) the
 * gateway's GraphQL code is still being optimised by V8 and spends ~20 % more CPU per request than
 * it does from ~10 s on, while the much smaller hand-written client is warm within a second.
 */
const warmup = quick ? 0.5 : 10;
const connections = Number(values.connections);
const latencies = values.latency?.map(Number) ?? [0, 5];
const KEY = 'Bearer mw_sandbox_demo_acme_read_write';
const ADMIN = `Bearer ${DEFAULT_ADMIN_TOKEN}`;

/** Pins a process (all its threads) to one core; false when taskset or a second core is missing. */
function pin(pid: number | undefined, core: number): boolean {
  if (values['no-pin'] || !pid || os.cpus().length < 2) return false;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const UNDER_TEST = 0;
const EVERYTHING_ELSE = 1;
const pinned = pin(process.pid, EVERYTHING_ELSE);

async function stop(process: ChildProcess): Promise<void> {
  if (process.exitCode !== null) return;
  const exited = new Promise((resolve) => process.once('exit', resolve));
  process.kill('SIGTERM');
  await exited;
}

async function upstreamCount(sandboxURL: string): Promise<number> {
  const response = await fetch(`${sandboxURL}/sandbox/v1/stats`, { headers: { authorization: ADMIN } });
  return ((await response.json()) as { data: { externalRequests: number } }).data.externalRequests;
}

/**
 * The upstream call count once it has stopped moving. autocannon ends a run by dropping the
 * requests it has in flight, but the process under test still finishes them; their upstream calls
 * must not be counted against the next measurement (they made S2 read 2.15 calls per operation).
 */
async function settledUpstreamCount(sandboxURL: string): Promise<number> {
  let count = await upstreamCount(sandboxURL);
  for (let polls = 0; polls < 40; polls++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const next = await upstreamCount(sandboxURL);
    if (next === count) return count;
    count = next;
  }
  return count;
}

/** Peak resident set size of a process, from Linux's /proc (VmHWM), in MiB. */
async function peakRssMiB(pid: number | undefined): Promise<number | null> {
  if (!pid) return null;
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match?.[1] ? Math.round(Number(match[1]) / 1024) : null;
}

interface Measurement {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  /** Measured one operation at a time, so that no two operations share (coalesce) a call. */
  upstreamCallsPerOperation: number;
  /** Under load, where identical concurrent GETs coalesce. */
  upstreamCallsPerOperationUnderLoad: number;
  errors: number;
  /**
   * CPU time (user + system, all threads) the process under test spent per operation under load, in
   * µs: 1 000 000 / this is what one fully busy core of it would serve, whatever the neighbours did
   * to the wall-clock figures.
   */
  cpuMicrosPerOperation: number | null;
}

/** The p-th percentile of sorted response times, in ms with 0.01 ms resolution. */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const value = sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
  return Number(value.toFixed(2));
}

/** CPU time (user + system) a process has used so far, in ms, from Linux's /proc; null elsewhere. */
async function cpuMs(pid: number | undefined): Promise<number | null> {
  if (!pid) return null;
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (!fields) return null;
  // utime and stime, fields 14 and 15 of stat (11 and 12 after the command name), in clock ticks.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function measure(
  sandboxURL: string,
  options: autocannon.Options,
  pid: number | undefined,
): Promise<Measurement> {
  const sequential = 20;
  const start = await settledUpstreamCount(sandboxURL);
  const alone = await autocannon({ ...options, connections: 1, amount: sequential });
  const before = await upstreamCount(sandboxURL);
  const times: number[] = [];
  // Without a callback autocannon returns its instance, an event emitter that is also a promise.
  const instance = autocannon({ ...options, connections, duration }) as unknown as autocannon.Instance &
    Promise<autocannon.Result>;
  const cpuBefore = await cpuMs(pid);
  instance.on(
    'response',
    (_client: unknown, _status: number, _bytes: number, ms: number) => void times.push(ms),
  );
  const result = await instance;
  const cpuAfter = await cpuMs(pid);
  const after = await upstreamCount(sandboxURL);
  const operations = result.requests.total;
  times.sort((a, b) => a - b);
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    upstreamCallsPerOperation: Number(((before - start) / alone.requests.total).toFixed(2)),
    upstreamCallsPerOperationUnderLoad: operations ? Number(((after - before) / operations).toFixed(2)) : 0,
    errors: result.errors + result.non2xx + alone.errors + alone.non2xx,
    cpuMicrosPerOperation:
      cpuBefore !== null && cpuAfter !== null && operations
        ? Math.round(((cpuAfter - cpuBefore) * 1000) / operations)
        : null,
  };
}

/** Everything the gateway shares between requests, off: each request calls the REST API itself. */
const SHARING_OFF = { UPSTREAM_CACHE_TTL_MS: '0', QUERY_DEDUPLICATION: 'false' };
/** The micro-cache off (coalescing and deduplication on): what the fleet and observability runs compare. */
const CACHE_OFF = { UPSTREAM_CACHE_TTL_MS: '0' };

const VARIANTS = ['defaults', 'sharing off'] as const;
type Variant = (typeof VARIANTS)[number];

/** `options` after the same warm-up as every other process under test. */
async function warmAndMeasure(
  sandboxURL: string,
  options: autocannon.Options,
  pid: number | undefined,
): Promise<Measurement> {
  await autocannon({ ...options, connections, duration: warmup });
  return measure(sandboxURL, options, pid);
}

/**
 * The gateway as deployed (production mode, its defaults), in front of `upstreamURL`, with `env` on
 * top. It logs at warn, so it says nothing when it listens (production prints no banner, and its
 * access log would cost what is measured): it gets a free port and is ready when /healthz answers.
 */
async function startBenchGateway(upstreamURL: string, env: Record<string, string> = {}, cwd?: string) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  return startProcess(
    'src/main.ts',
    [],
    {
      LOG_LEVEL: 'warn',
      UPSTREAM_URL: upstreamURL,
      PORT: String(port),
      NODE_ENV: 'production',
      GRAPHIQL: 'false',
      // Several gateways run at once; production's own metrics port (9464) would be taken twice.
      METRICS_PORT: 'same',
      ...env,
    },
    () => healthy(url),
    cwd,
  );
}

/** `url` once its /healthz answers 200, polled every 50 ms for at most 60 s. */
async function healthy(url: string): Promise<string> {
  for (let tries = 0; tries < 1200; tries++) {
    const ok = await fetch(`${url}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return url;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no answer from ${url}/healthz within 60 s`);
}

const graphql = (query: string, variables: Record<string, unknown> = {}) =>
  JSON.stringify({ query, variables });

/** S1, the dashboard: every wallet with its balances. */
const S1_QUERY =
  '{ wallets(first: 20) { nodes { id address assets { currencyCode balance { availableAmount lockedAmount } } } } }';

/** The sandbox process of a benchmark: 20 wallets of the demo merchant, and `args` (its world, latency). */
function startBenchSandbox(args: string[]) {
  return startProcess(
    'src/sandbox/main.ts',
    ['--port', '0', '--wallets', '20', ...args],
    { LOG_LEVEL: 'warn' },
    /Try: curl .* (http:\/\/\S+)\/external\/v1\/wallets/,
  );
}

async function main() {
  const rows: Record<string, unknown>[] = [];
  let gatewayPeakRss: number | null = null;
  for (const latency of latencies) {
    const sandbox = await startBenchSandbox([
      '--deposits',
      '100000',
      '--withdrawals',
      '10000',
      '--latency',
      String(latency),
    ]);
    pin(sandbox.child.pid, EVERYTHING_ELSE);
    const startGateway = async (env: Record<string, string> = {}, cwd?: string) => {
      const started = await startBenchGateway(sandbox.url, env, cwd);
      pin(started.child.pid, UNDER_TEST);
      return started;
    };
    const gateway = await startGateway();
    // The same gateway with nothing shared between requests: what one request costs on its own.
    const sharingOff = await startGateway(SHARING_OFF);
    const baselineDir = values.baseline;
    const baseline = baselineDir ? await startGateway({}, baselineDir) : undefined;
    const baselineSharingOff = baselineDir ? await startGateway(SHARING_OFF, baselineDir) : undefined;
    const optimal = await startProcess(
      'test/bench/optimal-server.ts',
      [],
      { LOG_LEVEL: 'warn', UPSTREAM_URL: sandbox.url, NODE_ENV: 'production' },
      /optimal client at (http:\/\/\S+)/,
    );
    pin(optimal.child.pid, UNDER_TEST);
    const peer = values['no-peer'] ? undefined : await startPeer(sandbox.url);
    pin(peer?.child.pid, UNDER_TEST);
    try {
      const wallets = await fetch(`${sandbox.url}/external/v1/wallets?size=20`, {
        headers: { authorization: KEY },
      });
      const walletIds = ((await wallets.json()) as { data: { id: string }[] }).data.map((w) => w.id);
      const walletId = walletIds[0] ?? '';
      const withdrawal = {
        senderWalletId: walletId,
        serviceFeeMode: 'exclusive',
        currencyCode: 'USDT',
        amount: '0.01',
        destination: { type: 'crypto', rail: 'tron', identifier: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7' },
      };
      const post = (url: string, body: string) => ({
        url,
        method: 'POST' as const,
        headers: { authorization: KEY, 'content-type': 'application/json' },
        body,
      });
      /** [name, gateway request, optimal request, the peer's screen (reads only)] */
      const scenarios: [string, autocannon.Options, autocannon.Options, PeerScreen?][] = [
        [
          'S1 dashboard: wallets(first: 20) with balances',
          post(`/graphql`, graphql(S1_QUERY)),
          { url: `${optimal.url}/s1`, headers: { authorization: KEY } },
          'S1',
        ],
        [
          'S2 activity feed: deposits(first: 50) with wallet address',
          post(
            `/graphql`,
            graphql('{ deposits(first: 50) { nodes { id amount status createdAt wallet { address } } } }'),
          ),
          { url: `${optimal.url}/s2`, headers: { authorization: KEY } },
          'S2',
        ],
        [
          'S3 wallet screen: wallet, latest 10 deposits and 10 withdrawals',
          post(
            `/graphql`,
            graphql(
              'query($id: ID!) { wallet(id: $id) { address assets { currencyCode balance { availableAmount } } deposits(first: 10) { nodes { id amount status } } withdrawalIntents(first: 10) { nodes { id amount status } } } }',
              { id: walletId },
            ),
          ),
          { url: `${optimal.url}/s3?wallet=${walletId}`, headers: { authorization: KEY } },
          'S3',
        ],
        [
          'S4 createWithdrawalIntent',
          post(
            `/graphql`,
            graphql(
              'mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename } }',
              {
                input: {
                  walletId,
                  serviceFeeMode: 'EXCLUSIVE',
                  currencyCode: 'USDT',
                  amount: '0.01',
                  destination: withdrawal.destination,
                },
              },
            ),
          ),
          post(`${optimal.url}/s4`, JSON.stringify(withdrawal)),
        ],
      ];
      const selected = scenarios.filter(
        ([name]) => !values.only || values.only.some((o) => name.startsWith(o)),
      );
      for (const [name, request, optimalOptions, peerScreen] of selected) {
        const peerOptions =
          peer && peerScreen ? post(`${peer.url}/graphql`, peerRequestBody(peerScreen, walletId)) : undefined;
        // A mutation is neither cached nor deduplicated: its defaults are its sharing-off figures.
        const variants = peerScreen ? VARIANTS : (['defaults'] as const);
        const o = await warmAndMeasure(sandbox.url, optimalOptions, optimal.child.pid);
        const p = peerOptions && (await warmAndMeasure(sandbox.url, peerOptions, peer?.child.pid));
        for (const variant of variants) {
          const target = variant === 'sharing off' ? sharingOff : gateway;
          const baselineTarget = variant === 'sharing off' ? baselineSharingOff : baseline;
          const gatewayOptions = { ...request, url: target.url + request.url };
          const baselineOptions = baselineTarget && { ...request, url: baselineTarget.url + request.url };
          // Warm every process (JIT, keep-alive pools, Yoga's document cache) before measuring.
          await autocannon({ ...gatewayOptions, connections, duration: warmup });
          if (baselineOptions) await autocannon({ ...baselineOptions, connections, duration: warmup });
          // With a baseline, alternate the order round by round so the machine's drift hits both alike.
          const rounds = baselineOptions ? Math.max(1, Number(values.rounds ?? 1)) : 1;
          const ours: Measured[] = [];
          const theirs: Measured[] = [];
          for (let round = 0; round < rounds; round++) {
            const measureOurs = async () =>
              ours.push(await measure(sandbox.url, gatewayOptions, target.child.pid));
            const measureTheirs = async () =>
              baselineOptions &&
              theirs.push(await measure(sandbox.url, baselineOptions, baselineTarget?.child.pid));
            if (round % 2 === 0) {
              await measureOurs();
              await measureTheirs();
            } else {
              await measureTheirs();
              await measureOurs();
            }
          }
          const g = medianRun(ours);
          const b = theirs.length > 0 ? medianRun(theirs) : undefined;
          const row = {
            scenario: name,
            variant,
            upstreamLatencyMs: latency,
            gateway: g,
            optimal: o,
            ratio: {
              requestsPerSecond: ratio(g.requestsPerSecond, o.requestsPerSecond),
              p50: ratio(g.p50, o.p50),
              p99: ratio(g.p99, o.p99),
              upstreamCalls: ratio(g.upstreamCallsPerOperation, o.upstreamCallsPerOperation),
              cpuPerOperation: ratio(g.cpuMicrosPerOperation ?? 0, o.cpuMicrosPerOperation ?? 0),
            },
            ...(p && {
              peer: p,
              vsPeer: {
                requestsPerSecond: ratio(g.requestsPerSecond, p.requestsPerSecond),
                cpuPerOperation: ratio(g.cpuMicrosPerOperation ?? 0, p.cpuMicrosPerOperation ?? 0),
              },
            }),
            ...(b && {
              baseline: b,
              vsBaseline: {
                requestsPerSecond: ratio(g.requestsPerSecond, b.requestsPerSecond),
                p50: ratio(g.p50, b.p50),
                p99: ratio(g.p99, b.p99),
                upstreamCalls: ratio(g.upstreamCallsPerOperation, b.upstreamCallsPerOperation),
                cpuPerOperation: ratio(g.cpuMicrosPerOperation ?? 0, b.cpuMicrosPerOperation ?? 0),
                /**
                 * This / baseline CPU per operation within each round, the two measured back to back:
                 * the machine's drift between rounds cancels out of each, so their spread is the noise
                 * a difference has to stand out from.
                 */
                cpuPerOperationByRound: ours.map((run, round) =>
                  ratio(run.cpuMicrosPerOperation ?? 0, theirs[round]?.cpuMicrosPerOperation ?? 0),
                ),
              },
            }),
          };
          rows.push(row);
          console.log(JSON.stringify(row));
        }
      }
      for (const { child } of [gateway, sharingOff]) {
        gatewayPeakRss = Math.max(gatewayPeakRss ?? 0, (await peakRssMiB(child.pid)) ?? 0);
      }
    } finally {
      await stop(optimal.child);
      if (peer) await stop(peer.child);
      await stop(gateway.child);
      await stop(sharingOff.child);
      for (const started of [baseline, baselineSharingOff]) if (started) await stop(started.child);
      await stop(sandbox.child);
    }
  }
  const machine = `${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${process.platform} ${os.release()}, Node ${process.version}`;
  const report = {
    date: new Date().toISOString(),
    machine,
    mode: quick ? 'quick' : 'full',
    durationSecondsPerRun: duration,
    connections,
    pinned,
    baseline: values.baseline ?? null,
    gatewayPeakRssMiB: gatewayPeakRss,
    rows,
  };
  const outDir = new URL('./results/', import.meta.url);
  await mkdir(outDir, { recursive: true });
  // A run of some scenarios or latencies only does not replace the full table docs/benchmark.md quotes.
  const name = values.only || values.latency || values.baseline ? 'partial' : 'latest';
  await writeFile(new URL(`${name}.json`, outDir), `${JSON.stringify(report, null, 2)}\n`);
  const markdown = toMarkdown(report);
  await writeFile(new URL(`${name}.md`, outDir), markdown);
  console.log(`\n${markdown}`);
}

/** One row of the main table, as main() builds it. */
interface Row {
  scenario: string;
  variant: Variant;
  upstreamLatencyMs: number;
  gateway: Measurement;
  optimal: Measurement;
  peer?: Measurement;
  ratio: { requestsPerSecond: number | null; p50: number | null; p99: number | null };
  vsPeer?: { requestsPerSecond: number | null };
}

/**
 * The issue's goals, each with the figure of this run that decides it: a table of goal, screen,
 * gateway setting, figure and whether it is met.
 */
function goals(rows: Row[]): string[] {
  const lines = [
    'Per-request CPU goals, from this run:',
    '',
    '| Goal | Screen | Gateway | Figure | Met |',
    '|---|---|---|---|---|',
  ];
  const met = (ok: boolean) => (ok ? 'yes' : '**no**');
  const screen = (row: Row) => row.scenario.split(' ')[0] as string;
  const reads = rows.filter((row) => row.peer !== undefined || /^S[123]/.test(row.scenario));
  for (const row of reads.filter((r) => r.upstreamLatencyMs === 0 && /^S[12]/.test(r.scenario))) {
    const r = row.ratio.requestsPerSecond ?? 0;
    lines.push(
      `| ≥ 0.8× the optimal client's req/s at 0 ms | ${screen(row)} | ${row.variant} | ${r}× | ${met(r >= 0.8)} |`,
    );
  }
  for (const row of reads.filter((r) => r.upstreamLatencyMs === 5)) {
    const p50 = row.ratio.p50 ?? 0;
    const p99 = row.ratio.p99 ?? 0;
    lines.push(
      `| p50 ≤ 1.10×, p99 ≤ 1.25× the optimal client's at 5 ms | ${screen(row)} | ${row.variant} | ${p50}×, ${p99}× | ${met(p50 <= 1.1 && p99 <= 1.25)} |`,
    );
  }
  for (const row of reads.filter((r) => r.variant === 'defaults')) {
    const off = reads.find(
      (r) =>
        r.variant === 'sharing off' &&
        r.scenario === row.scenario &&
        r.upstreamLatencyMs === row.upstreamLatencyMs,
    );
    if (!off) continue;
    const r = ratio(row.gateway.requestsPerSecond, off.gateway.requestsPerSecond) ?? 0;
    lines.push(
      `| defaults never slower than sharing off (req/s) | ${screen(row)} at ${row.upstreamLatencyMs} ms | defaults / sharing off | ${r}× | ${met(r >= 1)} |`,
    );
  }
  for (const row of reads.filter((r) => r.vsPeer)) {
    const r = row.vsPeer?.requestsPerSecond ?? 0;
    lines.push(
      `| ≥ 3× the generated peer's req/s | ${screen(row)} at ${row.upstreamLatencyMs} ms | ${row.variant} | ${r}× | ${met(r >= 3)} |`,
    );
  }
  return lines;
}

function ratio(a: number, b: number): number | null {
  return b ? Number((a / b).toFixed(2)) : null;
}

function toMarkdown(report: {
  baseline: string | null;
  date: string;
  machine: string;
  mode: string;
  durationSecondsPerRun: number;
  connections: number;
  pinned: boolean;
  gatewayPeakRssMiB: number | null;
  rows: Record<string, unknown>[];
}): string {
  const lines = [
    `Benchmark (${report.mode}, ${report.durationSecondsPerRun} s per run, ${report.connections} connections), ${report.date}`,
    `Machine: ${report.machine}. Gateway peak RSS: ${report.gatewayPeakRssMiB ?? '?'} MiB.`,
    'Every process as deployed (NODE_ENV=production). Gateway "defaults": micro-cache, coalescing, query deduplication, compiled execution; "sharing off": UPSTREAM_CACHE_TTL_MS=0 and QUERY_DEDUPLICATION=false. Peer: GraphQL Mesh + Hive Gateway generated from the OpenAPI description (test/bench/peer.ts).',
    report.pinned
      ? 'Pinned: the process under test (gateway, optimal client, peer: one at a time) on core 0; sandbox and autocannon on core 1.'
      : 'Not pinned: every process shares every core.',
    '',
    '| Scenario | Gateway | Upstream latency | Gateway req/s | Optimal req/s | Ratio | Peer req/s | Gateway / peer | Gateway p50 / p99 ms | Optimal p50 / p99 ms | p50 ratio | p99 ratio | Upstream calls/op, gateway / optimal (one at a time) | Under load | CPU µs/op, gateway / optimal / peer |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const rows = report.rows as unknown as Row[];
  for (const row of rows) {
    const g = row.gateway;
    const o = row.optimal;
    const p = row.peer;
    lines.push(
      `| ${row.scenario} | ${row.variant} | ${row.upstreamLatencyMs} ms | ${g.requestsPerSecond} | ${o.requestsPerSecond} | ${row.ratio.requestsPerSecond} | ${p?.requestsPerSecond ?? '–'} | ${row.vsPeer?.requestsPerSecond ?? '–'} | ${g.p50} / ${g.p99} | ${o.p50} / ${o.p99} | ${row.ratio.p50} | ${row.ratio.p99} | ${g.upstreamCallsPerOperation} / ${o.upstreamCallsPerOperation} | ${g.upstreamCallsPerOperationUnderLoad} / ${o.upstreamCallsPerOperationUnderLoad} | ${g.cpuMicrosPerOperation ?? '?'} / ${o.cpuMicrosPerOperation ?? '?'} / ${p?.cpuMicrosPerOperation ?? '–'} |`,
    );
  }
  lines.push('', ...goals(rows));
  const compared = (report.rows as { baseline?: Measurement }[]).some((r) => r.baseline);
  if (compared) {
    lines.push(
      '',
      `Against the baseline checkout (${report.baseline}), same run, same sandbox:`,
      '',
      '| Scenario | Upstream latency | req/s, this / baseline | Ratio | p50 ratio | p99 ratio | CPU µs/op, this / baseline | CPU ratio | CPU ratio of each round | Upstream calls/op, this / baseline |',
      '|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const row of report.rows as {
      scenario: string;
      variant: Variant;
      upstreamLatencyMs: number;
      gateway: Measurement;
      baseline?: Measurement;
      vsBaseline?: {
        requestsPerSecond: number;
        p50: number;
        p99: number;
        cpuPerOperation: number;
        cpuPerOperationByRound: (number | null)[];
      };
    }[]) {
      const { gateway: g, baseline: b, vsBaseline: v } = row;
      if (!b || !v) continue;
      lines.push(
        `| ${row.scenario} (${row.variant}) | ${row.upstreamLatencyMs} ms | ${g.requestsPerSecond} / ${b.requestsPerSecond} | ${v.requestsPerSecond} | ${v.p50} | ${v.p99} | ${g.cpuMicrosPerOperation ?? '?'} / ${b.cpuMicrosPerOperation ?? '?'} | ${v.cpuPerOperation} | ${v.cpuPerOperationByRound.join(', ')} | ${g.upstreamCallsPerOperation} / ${b.upstreamCallsPerOperation} |`,
      );
    }
  }
  const errors = (
    report.rows as { gateway: Measurement; optimal: Measurement; baseline?: Measurement }[]
  ).some((r) => r.gateway.errors || r.optimal.errors || r.baseline?.errors);
  if (errors) lines.push('', 'Some runs had errors or non-2xx answers: see latest.json.');
  return `${lines.join('\n')}\n`;
}

/**
 * `--fleet`: what sharing state through Redis, waiting for replicas, a Cluster and several workers
 * cost or bring, in one run: S1 (dashboard) and S4 (withdrawal, keyed) at 0 ms upstream latency
 * against one gateway with in-process stores; with a Redis master that has a replica, without and
 * with REDIS_MIN_REPLICA_ACKS=1 (the WAIT per withdrawal); with a 3-master Cluster (a replica
 * each), without and with the WAIT; and WORKERS=2. The ratios under the table compare setups
 * measured in this run. Nothing is pinned: the workers need both cores. On a 2-core machine the sandbox, autocannon and Redis share those cores
 * with the gateway, so 2 workers cannot double anything here; the figures show the overhead and
 * the direction, not a production scaling factor.
 */
async function fleet() {
  const { startRedis, startRedisCluster } = await import('../support/redis.ts');
  const redis = await startRedis();
  const replica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(redis.port)] });
  const cluster = await startRedisCluster(1);
  const rows: string[] = [];
  const storeRows: string[] = [];
  const measured = new Map<string, { rps: number; p50: number; p99: number }>();
  try {
    const setups: [string, Record<string, string>][] = [
      ['in-process stores, 1 process', {}],
      ['Redis + replica, no WAIT', { REDIS_URL: redis.url, REDIS_MIN_REPLICA_ACKS: '0' }],
      ['Redis + replica, WAIT 1', { REDIS_URL: redis.url, REDIS_MIN_REPLICA_ACKS: '1' }],
      ['Cluster 3 masters, no WAIT', { REDIS_CLUSTER_NODES: cluster.addresses, REDIS_MIN_REPLICA_ACKS: '0' }],
      ['Cluster 3 masters, WAIT 1', { REDIS_CLUSTER_NODES: cluster.addresses }],
      ['Redis, WORKERS=2', { REDIS_URL: redis.url, WORKERS: '2' }],
    ];
    for (const [name, env] of setups) {
      // An empty Redis per setup: the earlier setups' keys would count toward the API key's
      // bound (IDEMPOTENCY_MAX_KEYS_PER_CALLER) and refuse the later setups' withdrawals.
      for (const node of [redis, replica, ...cluster.nodes]) {
        try {
          execFileSync('redis-cli', ['-p', String(node.port), 'FLUSHALL'], { stdio: 'ignore' });
        } catch {
          // A replica refuses writes; its master's flush reaches it.
        }
      }
      // A fresh sandbox per setup: each S4 run adds thousands of intents, and the REST API's daily
      // limit check reads that history, so a shared one would slow every later setup down.
      const sandbox = await startBenchSandbox([
        '--deposits',
        '1000',
        '--withdrawals',
        '100',
        '--idempotency-extension',
        'off',
      ]);
      const wallets = await fetch(`${sandbox.url}/external/v1/wallets?size=20`, {
        headers: { authorization: KEY },
      });
      const walletId = ((await wallets.json()) as { data: { id: string }[] }).data[0]?.id ?? '';
      const gateway = await startBenchGateway(sandbox.url, { ...CACHE_OFF, ...env });
      try {
        const request = (body: string) => ({
          url: `${gateway.url}/graphql`,
          method: 'POST' as const,
          headers: { authorization: KEY, 'content-type': 'application/json' },
          body,
        });
        const s1 = request(graphql(S1_QUERY));
        // Every S4 request has its own idempotency key, so each claims, POSTs and saves in the store.
        let n = 0;
        // Anything but a created intent (a refusal answers 200 with errors) counts as an error.
        let refused = 0;
        const created = JSON.stringify({
          data: { createWithdrawalIntent: { __typename: 'CreateWithdrawalIntentSuccess' } },
        });
        const s4: autocannon.Options = {
          url: `${gateway.url}/graphql`,
          requests: [
            {
              method: 'POST',
              headers: { authorization: KEY, 'content-type': 'application/json' },
              onResponse: (_status, body) => {
                if (body !== created) refused++;
              },
              setupRequest: (req) => ({
                ...req,
                body: graphql(
                  'mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename } }',
                  {
                    input: {
                      walletId,
                      serviceFeeMode: 'EXCLUSIVE',
                      currencyCode: 'USDT',
                      amount: '0.01',
                      destination: {
                        type: 'crypto',
                        rail: 'tron',
                        identifier: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
                      },
                      idempotencyKey: `bench-${process.pid}-${Date.now()}-${n++}`,
                    },
                  },
                ),
              }),
            },
          ],
        };
        const scenarios: [string, autocannon.Options][] = [
          ['S1', s1],
          ['S4', s4],
        ];
        for (const [scenario, options] of scenarios) {
          await autocannon({ ...options, connections, duration: warmup });
          refused = 0;
          const result = await autocannon({ ...options, connections, duration });
          const failed = result.errors + result.non2xx + (scenario === 'S4' ? refused : 0);
          const row = `| ${name} | ${scenario} | ${Math.round(result.requests.average)} | ${result.latency.p50} / ${result.latency.p99} | ${failed} |`;
          measured.set(`${name} ${scenario}`, {
            rps: result.requests.average,
            p50: result.latency.p50,
            p99: result.latency.p99,
          });
          rows.push(row);
          console.log(row);
        }
      } finally {
        await stop(gateway.child);
        await stop(sandbox.child);
      }
    }
    storeRows.push(...(await storeCost(redis.url, cluster.addresses)));
  } finally {
    await cluster.close();
    await replica.close();
    await redis.close();
  }
  /** `a` against `b` in this run: req/s, p50 and p99 ratios. */
  const compare = (what: string, a: string, b: string) => {
    const x = measured.get(a);
    const y = measured.get(b);
    if (!x || !y) return `- ${what}: not measured`;
    const r = (p: number, q: number) => (q ? (p / q).toFixed(2) : '?');
    return `- ${what}: req/s ×${r(x.rps, y.rps)}, p50 ×${r(x.p50, y.p50)}, p99 ×${r(x.p99, y.p99)}`;
  };
  const ratios = [
    compare(
      'WAIT per withdrawal (S4, Redis + replica)',
      'Redis + replica, WAIT 1 S4',
      'Redis + replica, no WAIT S4',
    ),
    compare(
      'WAIT per withdrawal (S4, Cluster)',
      'Cluster 3 masters, WAIT 1 S4',
      'Cluster 3 masters, no WAIT S4',
    ),
    compare('Cluster against one Redis (S1)', 'Cluster 3 masters, no WAIT S1', 'Redis + replica, no WAIT S1'),
    compare('Cluster against one Redis (S4)', 'Cluster 3 masters, no WAIT S4', 'Redis + replica, no WAIT S4'),
    compare(
      'Redis against in-process stores (S4)',
      'Redis + replica, no WAIT S4',
      'in-process stores, 1 process S4',
    ),
  ];
  const markdown = [
    `Fleet benchmark (${quick ? 'quick' : 'full'}, ${duration} s per run, ${connections} connections, not pinned), ${new Date().toISOString()}`,
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}.`,
    '',
    '| Setup | Scenario | req/s | p50 / p99 ms | errors |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    'Ratios, same run:',
    '',
    ...ratios,
    '',
    "The store alone (a withdrawal's Redis writes, no gateway and no REST API; 10 at a time, alternating rounds, medians):",
    '',
    '| Topology | no WAIT: withdrawals/s, p50 / p99 ms | WAIT 1: withdrawals/s, p50 / p99 ms | WAIT 1 / no WAIT |',
    '|---|---|---|---|',
    ...storeRows,
  ].join('\n');
  await writeFile(new URL('./results/fleet.md', import.meta.url), `${markdown}\n`);
  console.log(`\n${markdown}`);
}

/**
 * What the WAIT costs a withdrawal's Redis writes, without the gateway's and the REST API's work
 * around them: each "withdrawal" is the store's calls of a keyed withdrawal that succeeds (claim,
 * record the attempt, register it, claim the intent, settle, remove the attempt), 10 at a time,
 * against one master with a replica and against the Cluster, with REDIS_MIN_REPLICA_ACKS 0 and 1
 * in alternating rounds; medians of 5 rounds.
 */
async function storeCost(redisURL: string, clusterNodes: string): Promise<string[]> {
  const { pino } = await import('pino');
  const { connectRedis } = await import('../../src/redis/connection.ts');
  const { RedisIdempotencyStore } = await import('../../src/withdrawals/redis-idempotency-store.ts');
  const silent = pino({ level: 'silent' });
  const topologies = [
    ['master + replica', { kind: 'single' as const, url: redisURL }],
    [
      'Cluster, 3 masters + replicas',
      {
        kind: 'cluster' as const,
        nodes: clusterNodes
          .split(',')
          .map((node) => ({ host: '127.0.0.1', port: Number(node.split(':')[1]) })),
      },
    ],
  ] as const;
  const rows: string[] = [];
  for (const [name, topology] of topologies) {
    const client = await connectRedis({ topology, timeoutMs: 2_000, minReplicaAcks: 1 }, silent);
    const stores = [0, 1].map(
      (acks) =>
        new RedisIdempotencyStore(client, {
          maxKeysPerCaller: 1_000_000,
          minReplicaAcks: acks,
          ackTimeoutMs: 1_000,
        }),
    );
    const round = async (store: (typeof stores)[number], count: number) => {
      const latencies: number[] = [];
      const started = performance.now();
      let next = 0;
      const worker = async () => {
        while (next < count) {
          const i = next++;
          const t = performance.now();
          const scope = `bench${i % 97}`;
          const key = `${process.pid}-${started}-${i}`;
          const holder = `h${i}`;
          const fresh = { state: 'pending' as const, fingerprint: 'f', startedAt: Date.now() };
          const attempt = {
            id: key,
            owner: `k:${scope}:${key}`,
            sentAt: Date.now(),
            endsBy: Date.now() + 1,
            endedAt: null,
          };
          const sending = { ...fresh, attempt };
          await store.claim(scope, key, fresh, 20_000, holder);
          await store.update(scope, key, sending, holder);
          await store.putSubmission(`p${i % 89}`, attempt);
          await store.claimIntent(`intent-${key}`, attempt.owner);
          await store.settle(scope, key, holder, sending, {
            state: 'succeeded',
            fingerprint: 'f',
            startedAt: fresh.startedAt,
            intent: { id: `intent-${key}` } as never,
          });
          await store.removeSubmission(`p${i % 89}`, attempt.id);
          latencies.push(performance.now() - t);
        }
      };
      await Promise.all(Array.from({ length: 10 }, worker));
      latencies.sort((x, y) => x - y);
      return {
        perSecond: count / ((performance.now() - started) / 1000),
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
      };
    };
    const results: { perSecond: number; p50: number; p99: number }[][] = [[], []];
    for (let r = 0; r < 5; r++) {
      for (const [i, store] of stores.entries()) results[i]?.push(await round(store, quick ? 300 : 2_000));
    }
    client.disconnect();
    const med = (list: { perSecond: number; p50: number; p99: number }[]) => ({
      perSecond: median(list.map((x) => x.perSecond)),
      p50: median(list.map((x) => x.p50)),
      p99: median(list.map((x) => x.p99)),
    });
    const [off, on] = results.map(med) as [ReturnType<typeof med>, ReturnType<typeof med>];
    const row = `| ${name} | ${Math.round(off.perSecond)}, ${off.p50.toFixed(2)} / ${off.p99.toFixed(2)} | ${Math.round(on.perSecond)}, ${on.p50.toFixed(2)} / ${on.p99.toFixed(2)} | withdrawals/s ×${(on.perSecond / off.perSecond).toFixed(2)}, p50 ×${(on.p50 / off.p50).toFixed(2)}, p99 ×${(on.p99 / off.p99).toFixed(2)} |`;
    console.log(row);
    rows.push(row);
  }
  return rows;
}

/** `--store`: storeCost alone, on a master with a replica and a Cluster of its own. */
async function storeOnly() {
  const { startRedis, startRedisCluster } = await import('../support/redis.ts');
  const redis = await startRedis();
  const replica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(redis.port)] });
  const cluster = await startRedisCluster(1);
  try {
    console.log(
      '| Topology | no WAIT: withdrawals/s, p50 / p99 ms | WAIT 1: withdrawals/s, p50 / p99 ms | WAIT 1 / no WAIT |',
    );
    await storeCost(redis.url, cluster.addresses);
  } finally {
    await cluster.close();
    await replica.close();
    await redis.close();
  }
}

/**
 * `--observability`: what metrics and tracing cost, S1 on one sandbox, one gateway per setup,
 * measured in alternating rounds (A B C D, A B C D, …) so that the machine's drift hits every setup
 * alike; the medians are compared with metrics off. Spans go to an OTLP/HTTP sink in this process,
 * which answers 200 and counts them.
 */
async function observabilityCost() {
  const { createServer } = await import('node:http');
  let exports = 0;
  let spanBytes = 0;
  const sink = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => {
      spanBytes += chunk.length;
    });
    request.on('end', () => {
      exports++;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const sinkURL = `http://127.0.0.1:${(sink.address() as { port: number }).port}`;
  const sandbox = await startBenchSandbox(['--deposits', '1000', '--withdrawals', '100']);
  pin(sandbox.child.pid, EVERYTHING_ELSE);
  const setups: [string, Record<string, string>][] = [
    ['metrics off', { METRICS: 'false' }],
    ['metrics on (default)', {}],
    ['metrics on, tracing 100 %', { OTEL_EXPORTER_OTLP_ENDPOINT: sinkURL, OTEL_TRACES_SAMPLER: 'always_on' }],
    [
      'metrics on, tracing 10 %',
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: sinkURL,
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.1',
      },
    ],
  ];
  const gateways = [];
  for (const [, env] of setups) {
    const started = await startBenchGateway(sandbox.url, { ...CACHE_OFF, ...env });
    pin(started.child.pid, UNDER_TEST);
    gateways.push(started);
  }
  const rounds = quick ? 1 : 5;
  const results: Measurement[][] = setups.map(() => []);
  try {
    const s1 = (url: string): autocannon.Options => ({
      url: `${url}/graphql`,
      method: 'POST',
      headers: { authorization: KEY, 'content-type': 'application/json' },
      body: graphql(S1_QUERY),
    });
    for (let round = 0; round < rounds; round++) {
      for (const [i, gateway] of gateways.entries()) {
        await autocannon({ ...s1(gateway.url), connections, duration: round === 0 ? warmup : 2 });
        const measured = await measure(sandbox.url, s1(gateway.url), gateway.child.pid);
        results[i]?.push(measured);
        console.log(JSON.stringify({ setup: setups[i]?.[0], round, ...measured }));
      }
    }
  } finally {
    for (const gateway of gateways) await stop(gateway.child);
    await stop(sandbox.child);
    sink.close();
  }
  const summary = results.map((measured) => ({
    requestsPerSecond: median(measured.map((m) => m.requestsPerSecond)),
    cpu: median(measured.map((m) => m.cpuMicrosPerOperation ?? 0)),
    p99: median(measured.map((m) => m.p99)),
    errors: measured.reduce((sum, m) => sum + m.errors, 0),
  }));
  const off = summary[0];
  const rows = summary.map(
    (m, i) =>
      `| ${setups[i]?.[0]} | ${m.requestsPerSecond} | ${ratio(m.requestsPerSecond, off?.requestsPerSecond ?? 0)} | ${m.cpu} | ${ratio(m.cpu, off?.cpu ?? 0)} | ${m.p99.toFixed(2)} | ${m.errors} |`,
  );
  const markdown = [
    `Observability cost, S1 dashboard (${quick ? 'quick' : 'full'}: ${rounds} alternating rounds of ${duration} s, medians; ${connections} connections; ${pinned ? 'pinned' : 'not pinned'}), ${new Date().toISOString()}`,
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}. OTLP exports received: ${exports} (${Math.round(spanBytes / 1024)} KiB).`,
    '',
    '| Setup | req/s | vs metrics off | CPU µs/op | vs metrics off | p99 ms | errors |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  await writeFile(new URL('./results/observability.md', import.meta.url), `${markdown}\n`);
  console.log(`\n${markdown}`);
}

/** Waits until the sandbox has seen no REST call for a second (at most 30 s). */
async function quiesce(sandboxURL: string): Promise<void> {
  let count = await upstreamCount(sandboxURL);
  for (let polls = 0; polls < 30; polls++) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const next = await upstreamCount(sandboxURL);
    if (next === count) return;
    count = next;
  }
}

/**
 * `--neighbour`: what a merchant sending expensive queries does to another merchant's screens.
 * One sandbox (Acme with 100 000 deposits and 20 wallets: the neighbour; Globex with 3 wallets:
 * the quiet merchant), one gateway per setup (sharing off in all, so every quiet request calls the
 * REST API). For each setup, in alternating rounds: phase A, the quiet merchant's wallet screen
 * alone (QUIET_CONNECTIONS at a time); phase B, the same while the neighbour sends the
 * whole-list walk from NEIGHBOUR_CONNECTIONS loops without pause. The quiet p50/p99 of B against A
 * is the figure; medians over rounds. Setups: each key's share off (0) and the shares given with
 * `--share` (default 0, 1, 2, 4, 8), at the default cost limit, which the walk passes (10 061).
 * Also the REST calls per second and the CPU of the gateway and of the sandbox during phase B,
 * which say what the quiet merchant waits for.
 */
async function noisyNeighbour() {
  const QUIET_KEY = 'Bearer mw_sandbox_demo_globex_read_write';
  const NEIGHBOUR_CONNECTIONS = 24;
  const QUIET_CONNECTIONS = 4;
  const WALK = '{ wallets(first: 20) { nodes { deposits(first: 1) { totalCount } } } }';
  const latency = values.latency?.[0] ?? '0';
  const sandbox = await startBenchSandbox([
    '--deposits',
    '100000',
    '--withdrawals',
    '10000',
    '--latency',
    latency,
  ]);
  pin(sandbox.child.pid, EVERYTHING_ELSE);
  const wallets = await fetch(`${sandbox.url}/external/v1/wallets?size=20`, {
    headers: { authorization: QUIET_KEY },
  });
  const walletId = ((await wallets.json()) as { data: { id: string }[] }).data[0]?.id ?? '';
  const shares = (values.share ?? ['0', '1', '2', '4', '8']).map(Number);
  // Each share with the key's whole-list walks unbounded (what the share alone does), then the
  // defaults: the default share and WALKS_PER_KEY walks of a key at once.
  const setups: [string, Record<string, string>][] = [
    ...shares.map((share): [string, Record<string, string>] => [
      share === 0 ? 'share off, walks unbounded' : `share ${share}, walks unbounded`,
      {
        UPSTREAM_CALLS_PER_KEY: String(share),
        QUERY_WALKS_PER_KEY: '0',
        UPSTREAM_CALLS_PER_KEY_PER_SECOND: '0',
      },
    ]),
    ...(values.pace ?? []).map((pace): [string, Record<string, string>] => [
      `share ${CALLS_PER_KEY}, ${WALKS_PER_KEY} walks, pace ${pace === '0' ? 'off' : `${pace}/s`}`,
      { UPSTREAM_CALLS_PER_KEY_PER_SECOND: pace },
    ]),
    [
      `defaults (share ${CALLS_PER_KEY}, ${WALKS_PER_KEY} walks per key, pace ${CALLS_PER_KEY_PER_SECOND}/s)`,
      {},
    ],
  ];
  const gateways = [];
  for (const [, env] of setups) {
    const started = await startBenchGateway(sandbox.url, { ...SHARING_OFF, ...env });
    pin(started.child.pid, UNDER_TEST);
    gateways.push(started);
  }
  const quietScreen = (url: string): autocannon.Options => ({
    url: `${url}/graphql`,
    method: 'POST',
    headers: { authorization: QUIET_KEY, 'content-type': 'application/json' },
    body: graphql(
      'query($id: ID!) { wallet(id: $id) { address assets { currencyCode balance { availableAmount } } deposits(first: 10) { nodes { id amount status } } withdrawalIntents(first: 10) { nodes { id amount status } } } }',
      { id: walletId },
    ),
  });
  // Identical walks in flight share their REST calls (coalescing), so the neighbour varies the
  // status filter: the whole list and every combination of statuses, in turn (16 different walks).
  const STATUSES = ['COMPLETED', 'PENDING', 'PROCESSING', 'FAILED'];
  const filters = Array.from({ length: 16 }, (_, bits) =>
    bits === 0 ? '' : `, status: [${STATUSES.filter((_, i) => bits & (1 << i)).join(', ')}]`,
  );
  let walkCount = 0;
  const walk = (url: string): autocannon.Options => ({
    url: `${url}/graphql`,
    timeout: 60,
    requests: [
      {
        method: 'POST',
        headers: { authorization: KEY, 'content-type': 'application/json' },
        setupRequest: (request) => ({
          ...request,
          body: graphql(
            values['same-walk']
              ? WALK
              : WALK.replace('deposits(first: 1)', `deposits(first: 1${filters[walkCount++ % 16]})`),
          ),
        }),
      },
    ],
  });
  /** Response times of `options` for `seconds`, sorted, and the errors. */
  const timed = async (options: autocannon.Options, seconds: number, connectionCount: number) => {
    const times: number[] = [];
    const instance = autocannon({
      ...options,
      connections: connectionCount,
      duration: seconds,
    }) as unknown as autocannon.Instance & Promise<autocannon.Result>;
    instance.on(
      'response',
      (_client: unknown, _status: number, _bytes: number, ms: number) => void times.push(ms),
    );
    const result = await instance;
    times.sort((a, b) => a - b);
    return {
      times,
      requests: result.requests.total,
      errors: result.errors + result.non2xx,
      non2xx: result.non2xx,
    };
  };
  interface Phase {
    quietP50: number;
    quietP99: number;
    quietPerSecond: number;
    quietErrors: number;
  }
  const rounds = quick ? 1 : Math.max(1, Number(values.rounds ?? 1));
  const results = setups.map(() => ({
    alone: [] as Phase[],
    beside: [] as (Phase & {
      walks: number;
      walkErrors: number;
      upstreamPerSecond: number;
      gatewayCpuPercent: number;
      sandboxCpuPercent: number;
    })[],
  }));
  const phase = (measured: Awaited<ReturnType<typeof timed>>): Phase => ({
    quietP50: percentile(measured.times, 50),
    quietP99: percentile(measured.times, 99),
    quietPerSecond: Math.round(measured.requests / duration),
    quietErrors: measured.errors,
  });
  try {
    for (const gateway of gateways)
      await autocannon({ ...quietScreen(gateway.url), connections: QUIET_CONNECTIONS, duration: warmup });
    for (let round = 0; round < rounds; round++) {
      const order = [...gateways.keys()];
      if (round % 2 === 1) order.reverse();
      for (const i of order) {
        const gateway = gateways[i] as (typeof gateways)[number];
        const alone = phase(await timed(quietScreen(gateway.url), duration, QUIET_CONNECTIONS));
        // The neighbour starts first and runs a second past the quiet merchant's measurement.
        const noisy = timed(walk(gateway.url), duration + 2, NEIGHBOUR_CONNECTIONS);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const upstreamBefore = await upstreamCount(sandbox.url);
        const cpuBefore = [await cpuMs(gateway.child.pid), await cpuMs(sandbox.child.pid)];
        const beside = await timed(quietScreen(gateway.url), duration, QUIET_CONNECTIONS);
        const cpuAfter = [await cpuMs(gateway.child.pid), await cpuMs(sandbox.child.pid)];
        const upstreamAfter = await upstreamCount(sandbox.url);
        const walks = await noisy;
        const busy = (k: number) => Math.round(((cpuAfter[k] ?? 0) - (cpuBefore[k] ?? 0)) / (duration * 10));
        const row = {
          ...phase(beside),
          walks: walks.requests,
          walkErrors: walks.errors,
          upstreamPerSecond: Math.round((upstreamAfter - upstreamBefore) / duration),
          gatewayCpuPercent: busy(0),
          sandboxCpuPercent: busy(1),
        };
        // The walks autocannon left in flight end at their deadline (REQUEST_DEADLINE_MS): wait
        // for the REST API to go quiet so that they do not load the next measurement.
        await quiesce(sandbox.url);
        results[i]?.alone.push(alone);
        results[i]?.beside.push(row);
        console.log(JSON.stringify({ setup: setups[i]?.[0], round, alone, beside: row }));
      }
    }
  } finally {
    for (const gateway of gateways) await stop(gateway.child);
    await stop(sandbox.child);
  }
  const med = (list: number[]) => Number(median(list).toFixed(2));
  const rows = results.map(({ alone, beside }, i) => {
    const a = { p50: med(alone.map((x) => x.quietP50)), p99: med(alone.map((x) => x.quietP99)) };
    const b = { p50: med(beside.map((x) => x.quietP50)), p99: med(beside.map((x) => x.quietP99)) };
    const p99Ratios = beside.map((x, r) => ratio(x.quietP99, alone[r]?.quietP99 ?? 0) ?? 0).join(', ');
    const walks = med(beside.map((x) => x.walks / (duration + 2)));
    const errors =
      beside.reduce((sum, x) => sum + x.quietErrors, 0) + alone.reduce((sum, x) => sum + x.quietErrors, 0);
    const cpu = `${med(beside.map((x) => x.gatewayCpuPercent))} % / ${med(beside.map((x) => x.sandboxCpuPercent))} %`;
    return `| ${setups[i]?.[0]} | ${a.p50} / ${a.p99} | ${b.p50} / ${b.p99} | ×${ratio(b.p50, a.p50)} / ×${ratio(b.p99, a.p99)} (rounds: ${p99Ratios}) | ${walks} | ${med(beside.map((x) => x.upstreamPerSecond))} | ${cpu} | ${errors} |`;
  });
  const markdown = [
    `Noisy neighbour (${quick ? 'quick' : 'full'}: ${rounds} alternating rounds of ${duration} s per phase, medians; sandbox latency ${latency} ms; ${pinned ? 'gateway pinned to core 0, sandbox and load to core 1' : 'not pinned'}), ${new Date().toISOString()}`,
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}. Quiet merchant: Globex's wallet screen, ${QUIET_CONNECTIONS} connections. Neighbour: Acme (100 000 deposits), \`${WALK}\` ${values['same-walk'] ? 'the same every time' : 'with each of 16 status filters in turn'}, from ${NEIGHBOUR_CONNECTIONS} connections without pause. Sharing off (UPSTREAM_CACHE_TTL_MS=0, QUERY_DEDUPLICATION=false) in every setup.`,
    '',
    '| Setup | quiet alone p50 / p99 ms | quiet beside the neighbour p50 / p99 ms | beside / alone p50 / p99 | neighbour walks answered/s | REST calls/s (phase B) | CPU gateway / sandbox (phase B) | quiet errors |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  const name = values['same-walk'] ? 'neighbour-same-walk' : 'neighbour';
  await writeFile(new URL(`./results/${name}.md`, import.meta.url), `${markdown}\n`);
  console.log(`\n${markdown}`);
}

/** What test/bench/big-merchants.ts needs of this file. */
const kit = () => ({
  values,
  quick,
  pinned,
  startBenchSandbox,
  startBenchGateway: (upstreamURL: string, env?: Record<string, string>, cwd?: string) =>
    startBenchGateway(upstreamURL, env, cwd),
  pinUnderTest: (pid: number | undefined) => void pin(pid, UNDER_TEST),
  pinElsewhere: (pid: number | undefined) => void pin(pid, EVERYTHING_ELSE),
  cpuMs,
  stop,
});

if (values.fleet) await fleet();
else if (values.history) await (await import('./big-merchants.ts')).history(kit());
else if (values['many-merchants']) await (await import('./many-merchants.ts')).manyMerchants(kit());
else if (values.neighbour) await noisyNeighbour();
else if (values.store) await storeOnly();
else if (values.observability) await observabilityCost();
else if (values.delivery) await (await import('./delivery.ts')).delivery(kit());
else await main();

type Measured = Awaited<ReturnType<typeof measure>>;

/** Each figure's median over rounds (the first round's for anything not a number). */
function medianRun(runs: Measured[]): Measured {
  const first = runs[0] as Measured;
  return Object.fromEntries(
    Object.entries(first).map(([name, value]) => [
      name,
      typeof value === 'number' ? median(runs.map((run) => run[name as keyof Measured] as number)) : value,
    ]),
  ) as Measured;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return 0;
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}
