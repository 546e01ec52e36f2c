/**
 * `npm run hostile [-- options]`: the hostile-load run of issue 24. Not a timed test: it starts a
 * sandbox and a gateway process (`node src/main.ts`, NODE_ENV=production, UPSTREAM_URL the
 * sandbox, GRAPHIQL=true so that phase 5 has a page to load, every other setting at its default
 * unless given with --env), and measures a probe query's latency and the gateway's RSS before,
 * during and after each attack:
 *
 *   1 idle        20,000 TCP connections that send nothing, a quarter of them only `POST /gra`
 *   2 websockets  10,000 keyless WebSockets (graphql-transport-ws, connection_init with `{}`)
 *   3 readyz      300 callers looping on /readyz while the REST API answers in 3 s
 *   4 loris       connections that send their headers, or a declared body, a byte every 3 s
 *   5 graphiql    100 uncompressed GraphiQL page loads at once
 *   7 documents   300 unique ~84 KB keyless documents (2,880 tokens, a comment after each: under
 *                 every query limit), 8 at a time: what parsing and validating what an outsider
 *                 sends leaves in the gateway's heap (the parse and validation cache)
 *   8 apq         2,700 keyless APQ registrations of unique ~95 KB texts under their own sha256,
 *                 8 at a time: what the APQ registry keeps for an outsider
 *   6 slow-readers  (only when asked for: --only 6) 300 connections that ask for the GraphiQL page
 *                 and never read it: what a response the client does not take costs the gateway.
 *                 `--slow-readers 10500` (past MAX_CONNECTIONS) shows whether such connections
 *                 can fill the connection cap; not on a version that copies the page per response
 *                 (before bb638be), where each one holds the 9 MB page in memory.
 *
 * The gateway's heap (nodejs_heap_size_used_bytes on its /metrics, served on a free port of its own
 * unless --env sets METRICS_PORT or METRICS=false) is sampled with its RSS, every 500 ms.
 *
 * The probe is `{ wallets(first: N) { edges { node { id } } } }` with the sandbox's demo key, one
 * at a time every --probe-interval ms, each on a new connection (as a new client would come) and
 * with N cycling through 1–40 so that every probe reaches the REST API (the micro-cache keeps an
 * answer for 1 s). p50 and p99 are of the answered probes; failures are counted apart, and the max
 * includes them (a probe that timed out counts its whole wait). During phase 3
 * a second probe on a route the slow REST API does not delay (deposits) shows whether the flood
 * starves the shared upstream pool.
 *
 * The attacks run in child processes of their own (hostile-attacker.ts), so that their event loops
 * do not delay the probe; the gateway and the attackers are started with `ulimit -n 65536` (or
 * the hard limit, if lower). Writes test/soak/results/hostile.{json,md} (hostile-partial.* when
 * any option differs from its default) and keeps the gateway's log in a temporary directory.
 *
 * Options: --only 1,3 (phases by number or name), --phase-seconds 15 (before and after windows,
 * and the readyz flood), --hold-seconds 40 (how long phases 1, 2 and 4 hold their connections),
 * --idle 20000, --partial-share 0.25, --websockets 10000, --readyz-callers 300,
 * --readyz-latency-ms 3000, --readyz-slow readiness|global (delay only the REST route /readyz
 * checks, GET /external/v1/wallets, or every route), --loris 1000 (connections of each of its three
 * kinds), --loris-interval-ms 3000, --graphiql-loads 100, --slow-readers 300, --documents 300,
 * --apq-registrations 2700, --flood-concurrency 8 (phases 7 and 8), --probe-interval-ms 50,
 * --probe-timeout-ms 30000, --env NAME=VALUE (repeatable: gateway environment), --checkout DIR (run
 * the gateway and the sandbox from another checkout with its own node_modules, e.g. an older commit
 * unpacked with `git archive`, to compare two versions under the same attacks).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_ADMIN_TOKEN } from '../../src/sandbox/config.ts';
import { freePort, startProcess } from '../support/process.ts';
import type { AttackCommand, AttackReport, Flood, Tally } from './hostile-attacker.ts';

const OPTIONS = {
  only: { type: 'string', default: '1,2,3,4,5,7,8' },
  'phase-seconds': { type: 'string', default: '15' },
  'hold-seconds': { type: 'string', default: '40' },
  idle: { type: 'string', default: '20000' },
  'partial-share': { type: 'string', default: '0.25' },
  websockets: { type: 'string', default: '10000' },
  'readyz-callers': { type: 'string', default: '300' },
  'readyz-latency-ms': { type: 'string', default: '3000' },
  'readyz-slow': { type: 'string', default: 'readiness' },
  loris: { type: 'string', default: '1000' },
  'loris-interval-ms': { type: 'string', default: '3000' },
  'graphiql-loads': { type: 'string', default: '100' },
  'slow-readers': { type: 'string', default: '300' },
  documents: { type: 'string', default: '300' },
  'apq-registrations': { type: 'string', default: '2700' },
  'flood-concurrency': { type: 'string', default: '8' },
  'probe-interval-ms': { type: 'string', default: '50' },
  'probe-timeout-ms': { type: 'string', default: '30000' },
  checkout: { type: 'string', default: '' },
} as const;
type OptionName = keyof typeof OPTIONS;
const { values } = parseArgs({
  options: { ...OPTIONS, env: { type: 'string', multiple: true, default: [] } },
});
const option = (name: OptionName): string => values[name];
const number = (name: OptionName): number => {
  const value = Number(option(name));
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`--${name} must be a number >= 0; got ${option(name)}`);
  return value;
};
const PHASES = [
  'idle',
  'websockets',
  'readyz',
  'loris',
  'graphiql',
  'slow-readers',
  'documents',
  'apq',
] as const;
type PhaseName = (typeof PHASES)[number];
const only = new Set(
  option('only')
    .split(',')
    .map((p) => p.trim())
    .map((p) => (/^\d$/.test(p) ? PHASES[Number(p) - 1] : p)),
);
for (const name of only) {
  if (!PHASES.includes(name as PhaseName))
    throw new Error(`--only: unknown phase ${name}; phases: 1-8 or ${PHASES}`);
}
const phaseMs = number('phase-seconds') * 1000;
const holdMs = number('hold-seconds') * 1000;
const probeIntervalMs = number('probe-interval-ms');
const probeTimeoutMs = number('probe-timeout-ms');
const readyzSlow = option('readyz-slow');
if (!['readiness', 'global'].includes(readyzSlow))
  throw new Error('--readyz-slow must be readiness or global');
const extraEnv: Record<string, string> = {};
for (const pair of values.env) {
  const at = pair.indexOf('=');
  if (at < 1) throw new Error(`--env expects NAME=VALUE; got ${pair}`);
  extraEnv[pair.slice(0, at)] = pair.slice(at + 1);
}
const partialRun =
  // Another checkout's figures are not this checkout's either.
  (Object.keys(OPTIONS) as OptionName[]).some((name) => values[name] !== OPTIONS[name].default) ||
  Object.keys(extraEnv).length > 0;

const root = new URL('../..', import.meta.url).pathname;
/** Where the gateway and the sandbox run from: another checkout (with its node_modules) compares two versions. */
const checkout = option('checkout') ? path.resolve(option('checkout')) : root;
const KEY = 'Bearer mw_sandbox_demo_acme_read_write';
const ADMIN = { authorization: `Bearer ${DEFAULT_ADMIN_TOKEN}`, 'content-type': 'application/json' };
/** The REST route the gateway's /readyz calls (transport.ping): GET /external/v1/wallets, no query. */
const READINESS_PATH = '/external/v1/wallets';
/** Sockets per attacker process, well under a 20,000 descriptor limit. */
const SOCKETS_PER_ATTACKER = 9_000;
/** Attackers connect from these loopback addresses, so that 20,000 connections do not run out of ports. */
const LOCAL_ADDRESSES = Array.from({ length: 32 }, (_, i) => `127.0.0.${i + 2}`);
const ULIMIT = 'ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"';
const CHECKPOINTS_S = [5, 10, 15, 20, 30, 45, 60, 90, 120];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const mb = (kb: number) => Math.round(kb / 102.4) / 10;
function bump(map: Record<string, number>, key: string, by = 1): void {
  map[key] = (map[key] ?? 0) + by;
}
/** `promise`, or a rejection naming `what` after `ms`. */
function bounded<T>(what: string, promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]);
}

// ---------------------------------------------------------------------------------------------
// Processes, and their clean-up on every way out.

/** Set once the run is over: the gateway's exit is then ours, not a crash. */
let finishing = false;
const children = new Set<ChildProcess>();
function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
/** Ends every child: SIGTERM, then SIGKILL for those still there after `graceMs`. */
async function stopChildren(graceMs: number): Promise<void> {
  const waiting = [...children].map(
    (child) =>
      new Promise<void>((resolve) =>
        child.exitCode !== null ? resolve() : child.once('exit', () => resolve()),
      ),
  );
  for (const child of children) child.kill('SIGTERM');
  await Promise.race([Promise.all(waiting), sleep(graceMs)]);
  for (const child of children) child.kill('SIGKILL');
}
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\nhostile: ${signal}, stopping the gateway, the sandbox and the attackers`);
    finishing = true;
    void stopChildren(3_000).finally(() => process.exit(130));
  });
}

/** The commit the gateway runs, and whether src/ differed from it; 'unknown' outside a git checkout. */
function codeVersion(): string {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: checkout, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim();
    const commit = git('rev-parse', '--short', 'HEAD');
    const dirty = git('status', '--porcelain', 'src');
    return `${commit}${dirty ? ' with uncommitted changes in src/' : ''}`;
  } catch {
    return `unknown (${checkout} is not a git checkout)`;
  }
}
// Read before the gateway starts: the code it loads, whatever is edited during the run.
const code = checkout === root ? codeVersion() : `${checkout}: ${codeVersion()}`;

const logDir = mkdtempSync(path.join(os.tmpdir(), 'hostile-'));
const gatewayLogPath = path.join(logDir, 'gateway.log');
const logFd = openSync(gatewayLogPath, 'a');

const sandbox = await startProcess(
  'src/sandbox/main.ts',
  ['--port', '0'],
  { LOG_LEVEL: 'warn' },
  /Try: curl .* (http:\/\/\S+)\/external\/v1\/wallets/,
  checkout,
);
track(sandbox.child);

interface Gateway {
  child: ChildProcess;
  pid: number;
  host: string;
  port: number;
  url: string;
  openFilesLimit: string;
}
const gatewayEnv: Record<string, string> = {
  PORT: '0',
  UPSTREAM_URL: sandbox.url,
  NODE_ENV: 'production',
  GRAPHIQL: 'true',
  // /metrics on a port of its own, free now (production's 9464 may be another gateway's): its heap.
  METRICS_PORT: String(await freePort()),
  ...extraEnv,
};
/** Where the gateway's heap is read; null when its metrics are off or on PORT. */
const metricsPort =
  gatewayEnv.METRICS === 'false' || gatewayEnv.METRICS_PORT === 'same'
    ? null
    : Number(gatewayEnv.METRICS_PORT);
const deaths: { at: string; window: string; code: number | null; signal: string | null }[] = [];
let gateway: Gateway | null = null;

async function startGateway(): Promise<Gateway> {
  const from = readFileSync(gatewayLogPath).length;
  const child = track(
    spawn('bash', ['-c', `${ULIMIT}; exec "$0" src/main.ts`, process.execPath], {
      cwd: checkout,
      env: { ...process.env, ...gatewayEnv },
      stdio: ['ignore', logFd, logFd],
    }),
  );
  const giveUpAt = Date.now() + 30_000;
  let url: string | undefined;
  while (!url) {
    if (child.exitCode !== null || Date.now() > giveUpAt) {
      child.kill('SIGKILL');
      throw new Error(
        `the gateway did not start within 30 s:\n${readFileSync(gatewayLogPath, 'utf8').slice(from).slice(-4_000)}`,
      );
    }
    await sleep(100);
    // The 'gateway listening' JSON line (production logs nothing else), or a developer's banner.
    const log = readFileSync(gatewayLogPath, 'utf8').slice(from);
    const match =
      /"url":"(http:\/\/[^"]+)\/graphql".*"gateway listening"/.exec(log) ??
      /gateway: (http:\/\/\S+)\/graphql/.exec(log);
    url = match?.[1];
  }
  const pid = child.pid as number;
  const started: Gateway = {
    child,
    pid,
    host: gatewayEnv.HOST && !['0.0.0.0', '::'].includes(gatewayEnv.HOST) ? gatewayEnv.HOST : '127.0.0.1',
    port: Number(new URL(url).port),
    url,
    openFilesLimit: openFilesLimit(pid),
  };
  child.once('exit', (code, signal) => {
    if (finishing) return;
    deaths.push({ at: new Date().toISOString(), window: currentWindow, code, signal });
    console.log(`  !! the gateway exited (code ${code}, signal ${signal}) during ${currentWindow}`);
    if (gateway?.child === child) gateway = null;
  });
  return started;
}

function openFilesLimit(pid: number): string {
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'));
  return line?.split(/\s{2,}/)[1] ?? 'unknown';
}

interface Attacker {
  child: ChildProcess;
  latest: AttackReport | null;
  stopped: ((report: AttackReport) => void) | null;
}
async function startAttacker(): Promise<Attacker> {
  const child = track(
    spawn(
      'bash',
      [
        '-c',
        `${ULIMIT}; exec "$0" "$1"`,
        process.execPath,
        new URL('./hostile-attacker.ts', import.meta.url).pathname,
      ],
      { cwd: root, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    ),
  );
  const attacker: Attacker = { child, latest: null, stopped: null };
  await bounded(
    'an attacker process to start',
    new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`an attacker exited with ${code}`)));
      child.on('message', (message: { type: string; report?: AttackReport }) => {
        if (message.type === 'ready') resolve();
        if (message.type === 'report' && message.report) attacker.latest = message.report;
        if (message.type === 'stopped' && message.report) attacker.stopped?.(message.report);
      });
    }),
    20_000,
  );
  return attacker;
}

const phaseList = PHASES.filter((p) => only.has(p));
const socketsNeeded = Math.max(
  only.has('idle') ? number('idle') : 0,
  only.has('websockets') ? number('websockets') : 0,
  only.has('loris') ? number('loris') * 3 : 0,
  only.has('slow-readers') ? number('slow-readers') : 0,
  1,
);
const attackers = await Promise.all(
  Array.from({ length: Math.ceil(socketsNeeded / SOCKETS_PER_ATTACKER) }, startAttacker),
);
gateway = await startGateway();
const attackerLimit = openFilesLimit(attackers[0]?.child.pid as number);
console.log(
  `hostile: gateway ${gateway.url} (pid ${gateway.pid}, open files ${gateway.openFilesLimit}), sandbox ${sandbox.url}, ` +
    `${attackers.length} attacker process(es) (open files ${attackerLimit}); gateway log ${gatewayLogPath}`,
);
console.log(`hostile: gateway environment ${JSON.stringify({ ...gatewayEnv, UPSTREAM_URL: undefined })}`);

function command(attacker: Attacker, message: AttackCommand): void {
  attacker.child.send(message);
}
/** Stops the attack on every attacker and merges their final reports. */
async function stopAttack(on: Attacker[]): Promise<AttackReport> {
  const reports = await Promise.all(
    on.map((attacker) =>
      bounded(
        'an attacker to stop',
        new Promise<AttackReport>((resolve) => {
          attacker.stopped = resolve;
          command(attacker, { cmd: 'stop' });
        }),
        15_000,
      ).catch((error: Error) => {
        console.log(`  !! ${error.message}; its last report is used`);
        return attacker.latest ?? { kinds: {} };
      }),
    ),
  );
  for (const attacker of on) attacker.latest = null;
  return mergeReports(reports);
}

function mergeReports(reports: AttackReport[]): AttackReport {
  const merged: AttackReport = { kinds: {} };
  for (const report of reports) {
    for (const [kind, tally] of Object.entries(report.kinds)) {
      const into: Tally = merged.kinds[kind] ?? {
        attempted: 0,
        connected: 0,
        open: 0,
        openAcked: 0,
        acked: 0,
        failed: {},
        closedAfter: {},
        answers: {},
      };
      merged.kinds[kind] = into;
      for (const field of ['attempted', 'connected', 'open', 'openAcked', 'acked'] as const) {
        into[field] += tally[field];
      }
      for (const field of ['failed', 'closedAfter', 'answers'] as const) {
        for (const [key, count] of Object.entries(tally[field])) bump(into[field], key, count);
      }
    }
    if (report.flood) merged.flood = report.flood;
  }
  return merged;
}

// ---------------------------------------------------------------------------------------------
// Measurements: probes, RSS and descriptors, the sandbox's request counts, all tagged by window.

interface ProbeSample {
  probe: string;
  window: string;
  /** When it started (epoch ms). */
  at: number;
  ms: number;
  error: string | null;
}
interface ProcessSample {
  window: string;
  at: number;
  rssKB?: number;
  fds?: number;
  /** nodejs_heap_size_used_bytes, in KB. */
  heapKB?: number;
}
let currentWindow = 'setup';
const probeSamples: ProbeSample[] = [];
const processSamples: ProcessSample[] = [];
const windows: {
  key: string;
  start: number;
  end: number;
  upstreamCalls: number;
  readinessCalls: number | null;
  listenOverflows: number | null;
}[] = [];

/**
 * The machine's count of connections dropped because a listen queue was full (TcpExt
 * ListenOverflows): the gateway's, mostly, while attackers open thousands at once. A dropped SYN
 * is retried by the client after 1 s, which is what a probe that took just over 1 s met.
 */
async function listenOverflows(): Promise<number | null> {
  try {
    const [names, counts] = (await readFile('/proc/net/netstat', 'utf8'))
      .split('\n')
      .filter((line) => line.startsWith('TcpExt:'))
      .map((line) => line.split(/\s+/));
    const at = names?.indexOf('ListenOverflows') ?? -1;
    return at > 0 ? Number(counts?.[at]) : null;
  } catch {
    return null;
  }
}

/** One probe query on a new connection; the error says what went wrong, null when it answered data. */
function probeOnce(
  field: 'wallets' | 'deposits',
  first: number,
): Promise<{ ms: number; error: string | null }> {
  const started = performance.now();
  const body = JSON.stringify({ query: `{ ${field}(first: ${first}) { edges { node { id } } } }` });
  const target = gateway;
  if (!target) return Promise.resolve({ ms: 0, error: 'gateway down' });
  return new Promise((resolve) => {
    let done = false;
    const finish = (error: string | null) => {
      if (done) return;
      done = true;
      resolve({ ms: performance.now() - started, error });
    };
    const req = request(
      {
        host: target.host,
        port: target.port,
        path: '/graphql',
        method: 'POST',
        agent: false,
        timeout: probeTimeoutMs,
        headers: {
          authorization: KEY,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (e: NodeJS.ErrnoException) => finish(e.code ?? e.message));
        res.on('end', () => {
          let parsed: {
            data?: Record<string, { edges?: unknown[] } | null>;
            errors?: { extensions?: { code?: string } }[];
          };
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString());
          } catch {
            return finish(`HTTP ${res.statusCode} (not JSON)`);
          }
          const code = parsed.errors?.[0]?.extensions?.code;
          if (res.statusCode !== 200 || code || !Array.isArray(parsed.data?.[field]?.edges)) {
            return finish(`HTTP ${res.statusCode}${code ? ` ${code}` : ''}`);
          }
          finish(null);
        });
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })));
    req.on('error', (e: NodeJS.ErrnoException) => finish(e.code ?? e.message));
    req.end(body);
  });
}

/** Probes one after the other until `signal` aborts, each recorded in the window it started in. */
async function probeLoop(name: string, field: 'wallets' | 'deposits', signal: AbortSignal): Promise<void> {
  let n = 0;
  while (!signal.aborted) {
    const window = currentWindow;
    const at = Date.now();
    const { ms, error } = await probeOnce(field, (n++ % 40) + 1);
    probeSamples.push({ probe: name, window, at, ms, error });
    await sleep(Math.max(0, probeIntervalMs - ms));
  }
}

async function sampleProcess(): Promise<void> {
  const target = gateway;
  if (!target) return;
  const sample: ProcessSample = { window: currentWindow, at: Date.now() };
  try {
    const status = await readFile(`/proc/${target.pid}/status`, 'utf8');
    sample.rssKB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    sample.fds = (await readdir(`/proc/${target.pid}/fd`)).length;
  } catch {
    // The gateway exited between the check and the read.
  }
  const heap = await heapUsedKB(target);
  if (heap !== null) sample.heapKB = heap;
  processSamples.push(sample);
}

/** The gateway's used heap from its /metrics (prom-client's default metrics), or null. */
async function heapUsedKB(target: Gateway): Promise<number | null> {
  if (metricsPort === null) return null;
  try {
    const response = await fetch(`http://${target.host}:${metricsPort}/metrics`, {
      signal: AbortSignal.timeout(2_000),
    });
    const bytes = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(await response.text())?.[1];
    return bytes === undefined ? null : Math.round(Number(bytes) / 1024);
  } catch {
    return null;
  }
}

async function admin(method: string, route: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${sandbox.url}/sandbox/v1${route}`, {
    method,
    headers: ADMIN,
    ...(body !== undefined && { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw new Error(`sandbox ${method} ${route}: ${response.status}`);
  return ((await response.json()) as { data: unknown }).data;
}
const externalRequests = async () =>
  ((await admin('GET', '/stats')) as { externalRequests: number }).externalRequests;

/**
 * Runs `action` as window `key`. The sandbox's request log is emptied at its start and read at its
 * end: calls on the readiness route are counted from it (null when more than its 10,000 entries).
 */
async function window(key: string, action: () => Promise<void>): Promise<void> {
  await admin('DELETE', '/requests');
  const before = await externalRequests();
  const overflowsBefore = await listenOverflows();
  const start = Date.now();
  currentWindow = key;
  try {
    await action();
  } finally {
    currentWindow = 'between';
    const end = Date.now();
    const upstreamCalls = (await externalRequests()) - before;
    const log = (await admin('GET', '/requests')) as { path: string }[];
    const overflowsAfter = await listenOverflows();
    windows.push({
      listenOverflows:
        overflowsBefore === null || overflowsAfter === null ? null : overflowsAfter - overflowsBefore,
      key,
      start,
      end,
      upstreamCalls,
      readinessCalls: log.length < upstreamCalls ? null : log.filter((r) => r.path === READINESS_PATH).length,
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The attacks.

interface TimelinePoint {
  t: number;
  open: Record<string, number>;
  connected: number;
  acked: number;
  gatewayFds: number | null;
  rssMB: number | null;
}
interface PhaseResult {
  phase: string;
  title: string;
  setting: Record<string, unknown>;
  report?: AttackReport;
  timeline?: TimelinePoint[];
  /** Connections still open (attacker's view) at N s after the attack began. */
  stillOpen?: Record<string, Record<string, number>>;
  notes: string[];
}
const phaseResults: PhaseResult[] = [];

/** Splits `total` over the attackers as evenly as possible. */
function shares(total: number): number[] {
  return attackers.map(
    (_, i) => Math.floor(total / attackers.length) + (i < total % attackers.length ? 1 : 0),
  );
}

/** Holds an attack that keeps connections for `holdMs`, sampling what is still open every second. */
async function hold(result: PhaseResult, start: (attacker: Attacker, share: number) => void, total: number) {
  const split = shares(total);
  attackers.forEach((attacker, i) => {
    if ((split[i] ?? 0) > 0) start(attacker, split[i] as number);
  });
  const began = Date.now();
  const timeline: TimelinePoint[] = [];
  while (Date.now() - began < holdMs) {
    await sleep(1_000);
    const merged = mergeReports(attackers.map((a) => a.latest ?? { kinds: {} }));
    const last = processSamples.at(-1);
    timeline.push({
      t: Math.round((Date.now() - began) / 1000),
      open: Object.fromEntries(Object.entries(merged.kinds).map(([kind, tally]) => [kind, tally.open])),
      connected: Object.values(merged.kinds).reduce((sum, tally) => sum + tally.connected, 0),
      acked: Object.values(merged.kinds).reduce((sum, tally) => sum + tally.openAcked, 0),
      gatewayFds: last?.fds ?? null,
      rssMB: last?.rssKB ? mb(last.rssKB) : null,
    });
  }
  result.report = await stopAttack(attackers);
  result.timeline = timeline;
  result.stillOpen = {};
  for (const at of CHECKPOINTS_S.filter((s) => s * 1000 <= holdMs)) {
    const point = timeline.find((p) => p.t >= at);
    if (point) result.stillOpen[`${at}s`] = point.open;
  }
  const lastPoint = timeline.at(-1);
  if (lastPoint) result.stillOpen[`${lastPoint.t}s (end)`] = lastPoint.open;
}

async function runPhase(name: PhaseName): Promise<void> {
  const index = PHASES.indexOf(name) + 1;
  const id = `${index} ${name}`;
  if (!gateway) {
    console.log('  !! starting a new gateway: the last one exited');
    gateway = await startGateway();
  }
  const target = gateway;
  const result: PhaseResult = { phase: id, title: '', setting: {}, notes: [] };
  phaseResults.push(result);
  const extraProbe = new AbortController();
  let extraProbeDone: Promise<void> | undefined;
  try {
    if (name === 'readyz') {
      const latencyMs = number('readyz-latency-ms');
      const faultPath = readyzSlow === 'readiness' ? READINESS_PATH : '/external/';
      await admin('POST', '/faults', { method: 'GET', path: faultPath, latencyMs, times: null });
      result.setting = { callers: number('readyz-callers'), latencyMs, faultPath };
      result.title = `${number('readyz-callers')} callers looping on /readyz; REST GET ${faultPath}* delayed ${latencyMs} ms in all three windows`;
      // A query on a route the fault does not delay: does the flood starve the shared upstream pool?
      if (faultPath !== '/external/')
        extraProbeDone = probeLoop('deposits (undelayed route)', 'deposits', extraProbe.signal);
    }
    console.log(`\nphase ${id}: before (${phaseMs / 1000} s)`);
    await window(`${id}/before`, () => sleep(phaseMs));
    console.log(`phase ${id}: during`);
    await window(`${id}/during`, async () => {
      switch (name) {
        case 'idle': {
          const count = number('idle');
          const partialShare = number('partial-share');
          result.title = `${count} idle TCP connections, ${Math.round(partialShare * 100)} % of them after sending only "POST /gra", held ${holdMs / 1000} s`;
          result.setting = { count, partialShare, holdSeconds: holdMs / 1000 };
          await hold(
            result,
            (attacker, share) =>
              command(attacker, {
                cmd: 'idle',
                host: target.host,
                port: target.port,
                count: share,
                partialShare,
                localAddresses: LOCAL_ADDRESSES,
              }),
            count,
          );
          break;
        }
        case 'websockets': {
          const count = number('websockets');
          result.title = `${count} keyless WebSockets (graphql-transport-ws, connection_init {}), held ${holdMs / 1000} s`;
          result.setting = { count, holdSeconds: holdMs / 1000 };
          await hold(
            result,
            (attacker, share) =>
              command(attacker, {
                cmd: 'websockets',
                url: `ws://${target.host}:${target.port}/graphql`,
                count: share,
                localAddresses: LOCAL_ADDRESSES,
              }),
            count,
          );
          break;
        }
        case 'loris': {
          const count = number('loris');
          const intervalMs = number('loris-interval-ms');
          result.title = `slow loris: ${count} connections each dripping headers, a keyed body and a keyless body (content-length 50000), one byte every ${intervalMs} ms, held ${holdMs / 1000} s`;
          result.setting = { countPerKind: count, intervalMs, holdSeconds: holdMs / 1000 };
          await hold(
            result,
            (attacker, share) =>
              command(attacker, {
                cmd: 'loris',
                host: target.host,
                port: target.port,
                count: share,
                intervalMs,
                authorization: KEY,
                localAddresses: LOCAL_ADDRESSES,
              }),
            count,
          );
          break;
        }
        case 'readyz': {
          const attacker = attackers[0] as Attacker;
          command(attacker, {
            cmd: 'readyz',
            host: target.host,
            port: target.port,
            callers: number('readyz-callers'),
          });
          await sleep(phaseMs);
          result.report = await stopAttack([attacker]);
          break;
        }
        case 'slow-readers': {
          const count = number('slow-readers');
          result.title = `${count} connections that ask for the GraphiQL page (uncompressed) and never read the answer, held ${holdMs / 1000} s`;
          result.setting = { count, holdSeconds: holdMs / 1000 };
          await hold(
            result,
            (attacker, share) =>
              command(attacker, {
                cmd: 'slow-readers',
                host: target.host,
                port: target.port,
                count: share,
                localAddresses: LOCAL_ADDRESSES,
              }),
            count,
          );
          break;
        }
        case 'documents':
        case 'apq': {
          const count = number(name === 'documents' ? 'documents' : 'apq-registrations');
          const concurrency = number('flood-concurrency');
          result.title =
            name === 'documents'
              ? `${count} unique ~84 KB keyless documents (2,880 tokens and as many comments), ${concurrency} at a time`
              : `${count} keyless APQ registrations of unique ~95 KB texts under their own sha256, ${concurrency} at a time`;
          result.setting = { count, concurrency };
          const attacker = attackers[0] as Attacker;
          command(attacker, { cmd: name, host: target.host, port: target.port, count, concurrency });
          const began = Date.now();
          const heapBy5s: string[] = [];
          // As fast as the gateway answers, bounded: a gateway that died answers no more.
          while (Date.now() - began < 300_000 && gateway) {
            await sleep(1_000);
            const seconds = Math.round((Date.now() - began) / 1000);
            const last = processSamples.at(-1);
            if (seconds % 5 === 0)
              heapBy5s.push(
                `${seconds} s: ${attacker.latest?.flood?.done ?? 0} sent, heap ${last?.heapKB ? mb(last.heapKB) : '–'} MB`,
              );
            const flood = attacker.latest?.flood;
            if (flood && flood.done >= count && flood.inFlight === 0) break;
          }
          result.notes.push(`the requests took ${((Date.now() - began) / 1000).toFixed(1)} s`);
          result.notes.push(`heap while under way: ${heapBy5s.join('; ')}`);
          result.report = await stopAttack([attacker]);
          break;
        }
        case 'graphiql': {
          const loads = number('graphiql-loads');
          result.title = `${loads} GraphiQL page loads at once (GET /graphql, accept: text/html, no accept-encoding)`;
          result.setting = { loads };
          const attacker = attackers[0] as Attacker;
          command(attacker, { cmd: 'graphiql', host: target.host, port: target.port, loads });
          const began = Date.now();
          // The window lasts as long as the loads do (each is bounded by 30 s in the attacker).
          while (Date.now() - began < 60_000) {
            await sleep(250);
            const flood = attacker.latest?.flood;
            if (flood && flood.done >= loads && flood.inFlight === 0) break;
          }
          result.notes.push(`the loads took ${((Date.now() - began) / 1000).toFixed(1)} s`);
          result.report = await stopAttack([attacker]);
          break;
        }
      }
    });
    console.log(`phase ${id}: after (${phaseMs / 1000} s)`);
    await window(`${id}/after`, () => sleep(phaseMs));
  } finally {
    extraProbe.abort();
    await extraProbeDone;
    if (name === 'readyz') await admin('DELETE', '/faults');
  }
}

// ---------------------------------------------------------------------------------------------
// The run.

const probing = new AbortController();
const probeDone = probeLoop('wallets', 'wallets', probing.signal);
const sampler = setInterval(() => void sampleProcess(), 500);
const startedAt = new Date();
try {
  for (const name of phaseList) await runPhase(name);
} finally {
  probing.abort();
  await bounded('the last probe', probeDone, probeTimeoutMs + 1_000).catch(() => {});
  clearInterval(sampler);
}
const finalGateway = gateway as Gateway | null;
finishing = true;
await stopChildren(5_000);
closeSync(logFd);

// ---------------------------------------------------------------------------------------------
// Figures.

function percentile(sorted: number[], p: number): number | null {
  if (!sorted.length) return null;
  return Math.round((sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0) * 10) / 10;
}

/** The gateway's log lines, by window: warnings and worse by message, and non-JSON lines. */
function gatewayLog(): Map<
  string,
  { warnings: Record<string, number>; requests: Record<string, number>; other: string[] }
> {
  const byWindow = new Map<
    string,
    { warnings: Record<string, number>; requests: Record<string, number>; other: string[] }
  >();
  const windowAt = (time: number) => windows.find((w) => time >= w.start && time <= w.end)?.key;
  let lastTime = 0;
  for (const line of readFileSync(gatewayLogPath, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    let entry: { level?: number; time?: number; msg?: string; status?: number; path?: string } | null = null;
    try {
      entry = JSON.parse(line);
    } catch {
      // A line that is not pino's: a banner, or a crash's stack trace.
    }
    if (entry?.time) lastTime = entry.time;
    const key = windowAt(entry?.time ?? lastTime);
    if (!key) continue;
    const slot = byWindow.get(key) ?? { warnings: {}, requests: {}, other: [] };
    byWindow.set(key, slot);
    if (!entry) {
      if (slot.other.length < 5) slot.other.push(line.slice(0, 200));
    } else if ((entry.level ?? 0) >= 40)
      bump(slot.warnings, `${entry.level === 40 ? 'warn' : 'error'}: ${entry.msg}`);
    else if (entry.msg === 'request') bump(slot.requests, `${entry.path} ${entry.status}`);
  }
  return byWindow;
}
const logByWindow = gatewayLog();

const rows = windows.map((w) => {
  const processInWindow = processSamples.filter((s) => s.window === w.key);
  const rss = processInWindow
    .map((s) => s.rssKB)
    .filter((v): v is number => v !== undefined && !Number.isNaN(v));
  const fds = processInWindow.map((s) => s.fds).filter((v): v is number => v !== undefined);
  const heap = processInWindow.map((s) => s.heapKB).filter((v): v is number => v !== undefined);
  // The main probe first, then phase 3's probe on the undelayed route.
  const probes = [...new Set(probeSamples.filter((s) => s.window === w.key).map((s) => s.probe))].sort(
    (a, b) => Number(b === 'wallets') - Number(a === 'wallets'),
  );
  return {
    window: w.key,
    seconds: Math.round((w.end - w.start) / 100) / 10,
    upstreamCalls: w.upstreamCalls,
    readinessCalls: w.readinessCalls,
    listenOverflows: w.listenOverflows,
    heapMB: {
      start: heap[0] ? mb(heap[0]) : null,
      end: heap.at(-1) ? mb(heap.at(-1) as number) : null,
      peak: heap.length ? mb(Math.max(...heap)) : null,
    },
    rssMB: {
      start: rss[0] ? mb(rss[0]) : null,
      end: rss.at(-1) ? mb(rss.at(-1) as number) : null,
      peak: rss.length ? mb(Math.max(...rss)) : null,
    },
    gatewayFds: { end: fds.at(-1) ?? null, peak: fds.length ? Math.max(...fds) : null },
    probes: probes.map((probe) => {
      const samples = probeSamples.filter((s) => s.window === w.key && s.probe === probe);
      // Percentiles of the answered probes; failures are counted apart (a refused connection fails in
      // a millisecond and would flatter p50), and the max includes them (a timed-out probe's wait).
      const sorted = samples
        .filter((s) => !s.error)
        .map((s) => s.ms)
        .sort((a, b) => a - b);
      const errors: Record<string, number> = {};
      for (const s of samples) if (s.error) bump(errors, s.error);
      return {
        probe,
        n: samples.length,
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        max: samples.length ? Math.round(Math.max(...samples.map((s) => s.ms)) * 10) / 10 : null,
        errors: samples.filter((s) => s.error).length,
        errorKinds: errors,
        // When in the window the failures and the five slowest probes were (s after its start).
        failedBetweenS: ((failed) =>
          failed.length
            ? [
                Math.round(((failed[0]?.at ?? 0) - w.start) / 100) / 10,
                Math.round(((failed.at(-1)?.at ?? 0) - w.start) / 100) / 10,
              ]
            : null)(samples.filter((s) => s.error)),
        failures: samples
          .filter((s) => s.error)
          .slice(0, 300)
          .map((s) => ({
            atS: Math.round((s.at - w.start) / 100) / 10,
            ms: Math.round(s.ms),
            error: s.error,
          })),
        slowest: samples
          .toSorted((a, b) => b.ms - a.ms)
          .slice(0, 5)
          .map((s) => ({
            atS: Math.round((s.at - w.start) / 100) / 10,
            ms: Math.round(s.ms),
            error: s.error,
          })),
      };
    }),
    gatewayLog: logByWindow.get(w.key) ?? { warnings: {}, requests: {}, other: [] },
  };
});

const readyzRows = rows.filter((r) => r.window.startsWith('3 readyz/'));
if (readyzRows.length === 3) {
  const result = phaseResults.find((p) => p.phase === '3 readyz');
  const [before, during] = readyzRows;
  for (const probe of during?.probes ?? []) {
    const base = before?.probes.find((p) => p.probe === probe.probe);
    if (base?.p50 && probe.p50) {
      result?.notes.push(
        `probe ${probe.probe}: p50 ${probe.p50} ms during the flood vs ${base.p50} ms with the same slow REST API and no flood (×${(probe.p50 / base.p50).toFixed(2)}); p99 ${probe.p99} vs ${base.p99} ms`,
      );
    }
  }
  const flood = result?.report?.flood;
  if (flood && during) {
    result?.notes.push(
      `${flood.done} /readyz answered during the flood (${JSON.stringify(flood.statuses)}${Object.keys(flood.errors).length ? `, errors ${JSON.stringify(flood.errors)}` : ''}); ` +
        `REST calls in the window: ${during.upstreamCalls} in all, ${during.readinessCalls ?? 'more than the log holds, so unknown'} on the readiness route` +
        (during.readinessCalls !== null ? ` (${(during.readinessCalls / during.seconds).toFixed(1)}/s)` : ''),
    );
  }
}

const results = {
  date: startedAt.toISOString(),
  machine: `${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${process.platform} ${os.release()}, Node ${process.version}`,
  code,
  options: { ...values, env: extraEnv },
  gatewayEnv: { ...gatewayEnv, UPSTREAM_URL: '(the sandbox)' },
  openFilesLimit: { gateway: finalGateway?.openFilesLimit ?? 'unknown', attackers: attackerLimit },
  attackerProcesses: attackers.length,
  gatewayExits: deaths,
  gatewayLog: gatewayLogPath,
  windows: rows,
  phases: phaseResults,
};

// The table: phase × window, the main probe (and phase 3's second probe on rows of its own).
const tableRows: string[][] = [];
for (const row of rows) {
  for (const probe of row.probes) {
    tableRows.push([
      probe.probe === 'wallets' ? row.window : `${row.window} · ${probe.probe}`,
      String(probe.n),
      String(probe.p50 ?? '–'),
      String(probe.p99 ?? '–'),
      String(probe.max ?? '–'),
      probe.errors ? `${probe.errors} ${JSON.stringify(probe.errorKinds)}` : '0',
      `${row.heapMB.start ?? '–'} / ${row.heapMB.end ?? '–'} / ${row.heapMB.peak ?? '–'}`,
      `${row.rssMB.end ?? '–'} / ${row.rssMB.peak ?? '–'}`,
      `${row.gatewayFds.end ?? '–'} / ${row.gatewayFds.peak ?? '–'}`,
      String(row.upstreamCalls),
      String(row.listenOverflows ?? '–'),
    ]);
  }
}
const header = [
  'Phase / window',
  'probes',
  'p50 ms',
  'p99 ms',
  'max ms',
  'errors',
  'heap MB start / end / peak',
  'RSS MB end / peak',
  'gateway fds end / peak',
  'REST calls',
  'listen overflows',
];
const markdownTable = [
  `| ${header.join(' | ')} |`,
  `|${header.map(() => '---').join('|')}|`,
  ...tableRows.map((r) => `| ${r.join(' | ')} |`),
].join('\n');

function describe(phase: PhaseResult): string[] {
  const lines = [`### ${phase.phase}: ${phase.title}`];
  for (const [kind, tally] of Object.entries(phase.report?.kinds ?? {})) {
    lines.push(describeTally(kind, tally));
  }
  if (phase.stillOpen && Object.keys(phase.stillOpen).length) {
    lines.push(
      `- still open (attacker's view) after: ${Object.entries(phase.stillOpen)
        .map(
          ([at, open]) =>
            `${at} ${Object.entries(open)
              .map(([k, n]) => `${k} ${n}`)
              .join(', ')}`,
        )
        .join('; ')}`,
    );
  }
  const flood = phase.report?.flood;
  if (flood) lines.push(describeFlood(flood));
  for (const note of phase.notes) lines.push(`- ${note}`);
  return lines;
}
function describeTally(kind: string, tally: Tally): string {
  const closed = Object.entries(tally.closedAfter).map(([s, n]) => [Number(s), n] as const);
  const closedTotal = closed.reduce((sum, [, n]) => sum + n, 0);
  const atOnce = closed.filter(([s]) => s < 1).reduce((sum, [, n]) => sum + n, 0);
  const later = closed.filter(([s]) => s >= 1).sort((a, b) => a[0] - b[0]);
  // Whole seconds after connecting: each second with its count when there are few, else the range.
  const range = !later.length
    ? ''
    : later.length <= 6
      ? ` (after ${later.map(([s, n]) => `${s} s: ${n}`).join(', ')})`
      : ` (after ${later[0]?.[0]}–${later.at(-1)?.[0]} s)`;
  return (
    `- ${kind}: ${tally.attempted} attempted, ${tally.connected} connected` +
    (Object.keys(tally.failed).length ? `, failed ${JSON.stringify(tally.failed)}` : '') +
    (kind === 'websocket' ? `, ${tally.acked} acknowledged` : '') +
    `; the gateway closed ${closedTotal}: ${atOnce} within 1 s, ${closedTotal - atOnce} later${range}; ` +
    `${tally.open} still open at the end${kind === 'websocket' ? ` (${tally.openAcked} acknowledged)` : ''}; ` +
    `answers ${JSON.stringify(tally.answers)}`
  );
}
function describeFlood(flood: Flood): string {
  return (
    `- ${flood.done} requests answered, statuses ${JSON.stringify(flood.statuses)}` +
    (Object.keys(flood.errors).length ? `, errors ${JSON.stringify(flood.errors)}` : '') +
    `, ${Math.round(flood.bytes / 2 ** 20)} MiB received` +
    (flood.latencyMs
      ? `, latency p50 ${flood.latencyMs.p50} / p99 ${flood.latencyMs.p99} / max ${flood.latencyMs.max} ms`
      : '')
  );
}

// When the failures and the stalls happened, for windows that had any.
const stallLines: string[] = [];
for (const row of rows) {
  for (const probe of row.probes) {
    const slow = probe.slowest.filter((s) => s.ms >= 500);
    if (!probe.errors && !slow.length) continue;
    const between = probe.failedBetweenS;
    stallLines.push(
      `- ${row.window} (${probe.probe}): ` +
        (between
          ? `${probe.errors} failed between ${between[0]} and ${between[1]} s into the window; `
          : '') +
        `slowest ${probe.slowest.map((s) => `${s.ms} ms at ${s.atS} s${s.error ? ` (${s.error})` : ''}`).join(', ')}`,
    );
  }
}
const logLines: string[] = [];
for (const row of rows) {
  const { warnings, other } = row.gatewayLog;
  if (Object.keys(warnings).length) logLines.push(`- ${row.window}: ${JSON.stringify(warnings)}`);
  for (const line of other) logLines.push(`- ${row.window}: \`${line}\``);
}
const markdown = [
  `Hostile-load run (${partialRun ? 'partial' : 'full'}), ${results.date}`,
  `Machine: ${results.machine}. Code: ${results.code}.`,
  `Gateway: node src/main.ts, env ${JSON.stringify(results.gatewayEnv)}, open files ${results.openFilesLimit.gateway}; ${attackers.length} attacker process(es), open files ${attackerLimit}.`,
  `Probe: { wallets(first: 1..40) { edges { node { id } } } }, one at a time every ${probeIntervalMs} ms, a new connection each, timeout ${probeTimeoutMs} ms; p50/p99 of the answered probes, max of all.`,
  '',
  markdownTable,
  '',
  ...phaseResults.flatMap((p) => [...describe(p), '']),
  ...(deaths.length
    ? ['### Gateway exits', ...deaths.map((d) => `- ${d.window}: code ${d.code}, signal ${d.signal}`), '']
    : []),
  ...(stallLines.length ? ['### Probe failures and stalls', ...stallLines, ''] : []),
  ...(logLines.length ? ['### Gateway warnings and errors, by window', ...logLines, ''] : []),
].join('\n');

const outDir = new URL('./results/', import.meta.url);
await mkdir(outDir, { recursive: true });
const name = partialRun ? 'hostile-partial' : 'hostile';
await writeFile(new URL(`${name}.json`, outDir), `${JSON.stringify(results, null, 2)}\n`);
await writeFile(new URL(`${name}.md`, outDir), `${markdown}\n`);
// In the project's JSON format, so that `biome check .` passes with the results checked in.
try {
  execFileSync(
    path.join(root, 'node_modules/.bin/biome'),
    ['format', '--write', `test/soak/results/${name}.json`],
    {
      cwd: root,
      stdio: 'ignore',
    },
  );
} catch {
  console.log(`hostile: could not format test/soak/results/${name}.json with biome`);
}
console.log(`\n${markdown}`);
console.log(`hostile: wrote test/soak/results/${name}.{json,md}; the gateway's log is ${gatewayLogPath}`);
process.exit(0);
