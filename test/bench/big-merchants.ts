/**
 * Two benchmark modes of test/bench/run.ts about merchants as they are in production rather than
 * as the demo world has them:
 *
 * `npm run bench -- --history [--sizes 1k,10k] [--big] [--warm 60] [--requests 30]`: what each
 * screen costs against the size of the merchant's history. One sandbox per size (`--latency 5`,
 * 20 wallets and the quiet wallet, deposits = size, withdrawal intents a tenth), one gateway in
 * production mode with its sharing off (every request calls the REST API itself), the calls
 * counted at the sandbox. Per screen: REST calls of one request against the fewest calls a REST
 * client needs (FEWEST below), p50/p99 of `--requests` sequential requests (fewer when one screen
 * would pass SCREEN_BUDGET_MS), gateway CPU per request, and errors by code. Two rounds: right
 * after the gateway starts, and again after `--warm` seconds (default 0). Sizes 1k, 10k, 100k by
 * default; 1M only with `--big` (its sandbox alone seeds for about a minute and holds ~2 GB).
 *
 * `npm run bench -- --many-merchants [--keys 2000]`: many keys, each request a different screen.
 * The sandbox gets KEYS_PER_MERCHANT keys per merchant (2,000 keys by default, through the admin
 * API), each merchant 2 wallets and 20 deposits; requests draw a key by Zipf (exponent 1) and a
 * screen by MIX, with withdrawals carrying an Idempotency-Key. Measured in one run: the gateway
 * with this mix, the gateway with identical requests (one key's wallet screen: what the other
 * modes measure), and the optimal REST client (test/bench/optimal-server.ts) with both.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import autocannon from 'autocannon';
import { DEFAULT_ADMIN_TOKEN } from '../../src/sandbox/config.ts';
import { startProcess } from '../support/process.ts';
import { seededFloats, weightedPicker, zipfSampler } from './zipf.ts';

type Started = { child: ChildProcess; url: string };

/** What run.ts hands over: its options and its way of starting and pinning processes. */
export interface BenchKit {
  values: Record<string, unknown>;
  quick: boolean;
  pinned: boolean;
  startBenchSandbox(args: string[]): Promise<Started>;
  startBenchGateway(upstreamURL: string, env?: Record<string, string>): Promise<Started>;
  pinUnderTest(pid: number | undefined): void;
  pinElsewhere(pid: number | undefined): void;
  cpuMs(pid: number | undefined): Promise<number | null>;
  stop(child: ChildProcess): Promise<void>;
}

const KEY = 'Bearer mw_sandbox_demo_acme_read_write';
const ADMIN = `Bearer ${DEFAULT_ADMIN_TOKEN}`;
/** The REST API's largest page. */
const REST_PAGE = 1000;
/** Everything the gateway shares between requests, off: each request calls the REST API itself. */
const SHARING_OFF = { UPSTREAM_CACHE_TTL_MS: '0', QUERY_DEDUPLICATION: 'false' };
/** A screen's sequential requests stop after this long (at least 3 requests are sent). */
const SCREEN_BUDGET_MS = 30_000;

const WALLET_SCREEN =
  'query($id: ID!) { wallet(id: $id) { address assets { currencyCode balance { availableAmount } } deposits(first: 10) { nodes { id amount status } } withdrawalIntents(first: 10) { nodes { id amount status } } } }';
const LAST_10 = 'query($id: ID!) { wallet(id: $id) { deposits(last: 10) { nodes { id amount status } } } }';
const PAGE_AFTER =
  'query($id: ID!, $after: String) { wallet(id: $id) { deposits(first: 10, after: $after) { nodes { id amount status } pageInfo { endCursor hasNextPage } } } }';
const CURSOR_WALK =
  'query($id: ID!, $first: Int!, $after: String) { wallet(id: $id) { deposits(first: $first, after: $after) { nodes { id } pageInfo { endCursor hasNextPage } } } }';
const TOTAL_COUNT = 'query($id: ID!) { wallet(id: $id) { deposits(first: 1) { totalCount } } }';

const graphql = (query: string, variables: Record<string, unknown> = {}) =>
  JSON.stringify({ query, variables });

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

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? (sorted[Math.floor(sorted.length / 2)] as number) : 0;
}

/** One GraphQL request: its time, and its error codes (HTTP status when the body is not GraphQL). */
async function ask(gatewayURL: string, body: string, key = KEY) {
  const started = performance.now();
  const response = await fetch(`${gatewayURL}/graphql`, {
    method: 'POST',
    headers: { authorization: key, 'content-type': 'application/json' },
    body,
  });
  const text = await response.text();
  const ms = performance.now() - started;
  let parsed: { data?: unknown; errors?: { extensions?: { code?: string } }[] } = {};
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ms, codes: [`HTTP_${response.status}`], data: undefined };
  }
  const codes = (parsed.errors ?? []).map((e) => e.extensions?.code ?? 'NO_CODE');
  if (!response.ok && codes.length === 0) codes.push(`HTTP_${response.status}`);
  return { ms, codes, data: parsed.data as Record<string, unknown> | undefined };
}

// --- --history -------------------------------------------------------------------------------

interface ScreenFigures {
  screen: string;
  /** REST calls of the round's first request, and the median over the round's requests. */
  callsFirst: number;
  callsMedian: number;
  fewest: number;
  requests: number;
  p50: number;
  p99: number;
  cpuMsPerRequest: number | null;
  /** Requests answered with an error, by code (a request with two codes counts under each). */
  errors: Record<string, number>;
  note?: string;
}

interface SizeResult {
  /** The size asked for (the quiet wallet adds 10 deposits and 3 intents). */
  size: number;
  deposits: number;
  intents: number;
  busyWalletDeposits: number;
  rounds: { label: string; screens: ScreenFigures[] }[];
}

/** `n` with k/M suffixes: 1k, 10k, 1M. */
function parseSize(text: string): number {
  const match = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(text.trim());
  if (!match) throw new Error(`--sizes: "${text}" is not a size such as 10k or 1M`);
  const scale = match[2]?.toLowerCase() === 'k' ? 1_000 : match[2]?.toLowerCase() === 'm' ? 1_000_000 : 1;
  return Math.round(Number(match[1]) * scale);
}

function sizeLabel(n: number): string {
  return n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1_000 ? `${n / 1_000}k` : String(n);
}

export async function history(kit: BenchKit): Promise<void> {
  const { values } = kit;
  const sizes = values.sizes
    ? String(values.sizes).split(',').map(parseSize)
    : [1_000, 10_000, 100_000, ...(values.big ? [1_000_000] : [])];
  const requests = Number(values.requests ?? (kit.quick ? 5 : 30));
  const warmSeconds = Number(values.warm ?? 0);
  const results: SizeResult[] = [];
  for (const size of sizes) {
    console.log(`history: ${sizeLabel(size)} deposits, ${sizeLabel(size / 10)} intents…`);
    const intents = Math.round(size / 10);
    const sandbox = await kit.startBenchSandbox([
      '--deposits',
      String(size),
      '--withdrawals',
      String(intents),
      '--latency',
      '5',
      '--quiet-wallet',
    ]);
    kit.pinElsewhere(sandbox.child.pid);
    const gateway = await kit.startBenchGateway(sandbox.url, SHARING_OFF);
    kit.pinUnderTest(gateway.child.pid);
    try {
      results.push({ size, ...(await measureHistory(kit, sandbox.url, gateway, requests, warmSeconds)) });
    } finally {
      await kit.stop(gateway.child);
      await kit.stop(sandbox.child);
    }
  }
  await writeHistory(kit, results, requests, warmSeconds);
}

async function restGet(sandboxURL: string, path: string) {
  const response = await fetch(`${sandboxURL}/external/v1${path}`, { headers: { authorization: KEY } });
  return (await response.json()) as { data: Record<string, unknown>[]; paging?: { totalCount: number } };
}

async function measureHistory(
  kit: BenchKit,
  sandboxURL: string,
  gateway: Started,
  requests: number,
  warmSeconds: number,
): Promise<Omit<SizeResult, 'size'>> {
  // The world's shape, read straight from the REST API (not counted against any screen).
  const wallets = (await restGet(sandboxURL, `/wallets?page=1&size=${REST_PAGE}`)).data as {
    id: string;
    createdAt: string;
  }[];
  const byAge = [...wallets].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  // The quiet wallet is the newest-created (src/sandbox/seed.ts); the busy one the oldest.
  const quiet = byAge[byAge.length - 1]?.id ?? '';
  const busy = byAge[0]?.id ?? '';
  const deposits = (await restGet(sandboxURL, '/deposits?page=1&size=1')).paging?.totalCount ?? 0;
  const intents = (await restGet(sandboxURL, '/withdrawal-intents?page=1&size=1')).paging?.totalCount ?? 0;
  const depositPages = Math.ceil(deposits / REST_PAGE);
  const intentPages = Math.ceil(intents / REST_PAGE);

  // The cursor after the item at about half the busy wallet's depth, by paging from the newest
  // end (untimed; before the first round, so it also stands for a client that paged there).
  const totalAnswer = await ask(gateway.url, graphql(TOTAL_COUNT, { id: busy }));
  const busyTotal = Number(
    ((totalAnswer.data?.wallet as { deposits?: { totalCount?: number } } | undefined)?.deposits?.totalCount ??
      Math.round((deposits / byAge.length) * 1.0)) as number,
  );
  const depth = Math.floor(busyTotal / 2);
  let cursor: string | null = null;
  let reached = 0;
  let cursorError: string | undefined;
  while (reached < depth) {
    const first = Math.min(100, depth - reached);
    const answer = await ask(gateway.url, graphql(CURSOR_WALK, { id: busy, first, after: cursor }));
    const page = (answer.data?.wallet as { deposits?: { nodes: unknown[]; pageInfo: { endCursor: string } } })
      ?.deposits;
    if (answer.codes.length || !page) {
      cursorError = `${answer.codes.join(', ') || 'no data'} at item ${reached}`;
      break;
    }
    reached += page.nodes.length;
    cursor = page.pageInfo.endCursor;
    if (page.nodes.length === 0) break;
  }

  /** [screen, request body, fewest calls a REST client needs, note] */
  const screens: [string, string, number, string?][] = [
    ['wallet screen, busy wallet', graphql(WALLET_SCREEN, { id: busy }), 3],
    ['wallet screen, quiet wallet', graphql(WALLET_SCREEN, { id: quiet }), 1 + depositPages + intentPages],
    ["a wallet's deposits(last: 10)", graphql(LAST_10, { id: busy }), 3],
    [
      `a wallet's page after item ${reached.toLocaleString('en')}`,
      graphql(PAGE_AFTER, { id: busy, after: cursor }),
      2,
      cursorError ? `cursor walk stopped: ${cursorError}` : undefined,
    ],
    ["a wallet's deposits totalCount", graphql(TOTAL_COUNT, { id: busy }), depositPages],
  ];
  const rounds: SizeResult['rounds'] = [];
  for (const label of ['cold', 'warm'] as const) {
    if (label === 'warm' && warmSeconds > 0) {
      console.log(`  waiting ${warmSeconds} s before the second round…`);
      await new Promise((resolve) => setTimeout(resolve, warmSeconds * 1000));
    }
    const figures: ScreenFigures[] = [];
    for (const [screen, body, fewest, note] of screens) {
      figures.push(await measureScreen(kit, sandboxURL, gateway, screen, body, fewest, requests, note));
      const last = figures[figures.length - 1] as ScreenFigures;
      console.log(
        `  ${label} ${screen}: ${last.callsMedian}/${last.fewest} calls, p50 ${last.p50} ms, p99 ${last.p99} ms, CPU ${last.cpuMsPerRequest} ms, errors ${JSON.stringify(last.errors)}`,
      );
    }
    rounds.push({
      label: label === 'cold' ? 'right after start' : `after ${warmSeconds} s of warm-up`,
      screens: figures,
    });
  }
  return { deposits, intents, busyWalletDeposits: busyTotal, rounds };
}

async function measureScreen(
  kit: BenchKit,
  sandboxURL: string,
  gateway: Started,
  screen: string,
  body: string,
  fewest: number,
  requests: number,
  note?: string,
): Promise<ScreenFigures> {
  const times: number[] = [];
  const calls: number[] = [];
  const errors: Record<string, number> = {};
  const started = performance.now();
  const cpuBefore = await kit.cpuMs(gateway.child.pid);
  let cpuInRequests = 0;
  for (let i = 0; i < requests; i++) {
    if (i >= 3 && performance.now() - started > SCREEN_BUDGET_MS) break;
    const before = await settledCount(sandboxURL);
    const cpuStart = await kit.cpuMs(gateway.child.pid);
    const answer = await ask(gateway.url, body);
    const cpuEnd = await kit.cpuMs(gateway.child.pid);
    if (cpuStart !== null && cpuEnd !== null) cpuInRequests += cpuEnd - cpuStart;
    calls.push((await settledCount(sandboxURL)) - before);
    times.push(answer.ms);
    for (const code of new Set(answer.codes)) errors[code] = (errors[code] ?? 0) + 1;
  }
  const cpuAfter = await kit.cpuMs(gateway.child.pid);
  times.sort((a, b) => a - b);
  return {
    screen,
    callsFirst: calls[0] ?? 0,
    callsMedian: median(calls),
    fewest,
    requests: times.length,
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    // The CPU between each request's send and its answer (ticks of 10 ms, summed over the round).
    cpuMsPerRequest:
      cpuBefore !== null && cpuAfter !== null && times.length
        ? Number((cpuInRequests / times.length).toFixed(1))
        : null,
    errors,
    ...(note ? { note } : {}),
  };
}

async function writeHistory(kit: BenchKit, results: SizeResult[], requests: number, warmSeconds: number) {
  const errorText = (e: Record<string, number>, n: number) =>
    Object.keys(e).length
      ? Object.entries(e)
          .map(([code, count]) => `${count}/${n} ${code}`)
          .join(', ')
      : '0';
  const lines = [
    `# Big merchants: cost against history size`,
    '',
    `${new Date().toISOString()}; sandbox --latency 5, 20 wallets + the quiet wallet, withdrawal intents a tenth of the deposits; gateway in production mode with sharing off (UPSTREAM_CACHE_TTL_MS=0, QUERY_DEDUPLICATION=false); up to ${requests} sequential requests per screen (at most ${SCREEN_BUDGET_MS / 1000} s, at least 3); second round after ${warmSeconds} s; ${kit.pinned ? 'gateway pinned to core 0, sandbox and load to core 1' : 'not pinned'}.`,
    '',
    'Calls: REST calls of one request (median over the round; first request in brackets when it differs) / the fewest a REST client needs. CPU: gateway CPU time per request (user + system, 10 ms ticks, summed over the round).',
  ];
  for (const result of results) {
    for (const round of result.rounds) {
      lines.push(
        '',
        `## ${sizeLabel(result.size)} deposits (${result.deposits.toLocaleString('en')}; ${result.intents.toLocaleString('en')} intents; busy wallet ${result.busyWalletDeposits.toLocaleString('en')} deposits), ${round.label}`,
        '',
        '| screen | calls / fewest | calls ÷ fewest | p50 ms | p99 ms | CPU ms / request | requests | errors |',
        '|---|---|---|---|---|---|---|---|',
      );
      for (const s of round.screens) {
        const first = s.callsFirst !== s.callsMedian ? ` (${s.callsFirst})` : '';
        lines.push(
          `| ${s.screen}${s.note ? ` (${s.note})` : ''} | ${s.callsMedian}${first} / ${s.fewest} | ${Object.values(s.errors).some((n) => n === s.requests) ? '**fails**' : `×${(s.callsMedian / s.fewest).toFixed(1)}`} | ${s.p50} | ${s.p99} | ${s.cpuMsPerRequest ?? 'n/a'} | ${s.requests} | ${errorText(s.errors, s.requests)} |`,
        );
      }
    }
  }
  const markdown = lines.join('\n');
  const dir = new URL('./results/', import.meta.url);
  await mkdir(dir, { recursive: true });
  const name = `history${kit.values.sizes || kit.values.big ? `-${results.map((r) => sizeLabel(r.size)).join('-')}` : ''}`;
  await writeFile(new URL(`${name}.md`, dir), `${markdown}\n`);
  await writeFile(new URL(`${name}.json`, dir), `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\n${markdown}`);
}

// --- --many-merchants ------------------------------------------------------------------------

const KEYS_PER_MERCHANT = 4;
const WALLETS_PER_MERCHANT = 2;
const DEPOSITS_PER_WALLET = 10;
/** The share of each screen in the mix. */
const MIX = { dashboard: 30, walletScreen: 25, activityFeed: 20, depositsPage: 20, withdrawal: 5 } as const;
type Screen = keyof typeof MIX;

const DASHBOARD =
  '{ wallets(first: 20) { nodes { id address assets { currencyCode balance { availableAmount lockedAmount } } } } }';
const ACTIVITY_FEED = '{ deposits(first: 50) { nodes { id amount status createdAt wallet { address } } } }';
const DEPOSITS_PAGE =
  'query($id: ID!) { wallet(id: $id) { deposits(first: 20) { nodes { id amount status createdAt } pageInfo { endCursor hasNextPage } } } }';
const WITHDRAW =
  'mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename } }';
const DESTINATION = { type: 'crypto', rail: 'tron', identifier: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7' };

interface Tenant {
  key: string;
  wallets: string[];
}

async function admin(sandboxURL: string, path: string, body: unknown) {
  const response = await fetch(`${sandboxURL}/sandbox/v1${path}`, {
    method: 'POST',
    headers: { authorization: ADMIN, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { data: Record<string, unknown> }).data;
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

/** Merchants with KEYS_PER_MERCHANT keys each (ranked: keys[0] is the busiest under Zipf). */
async function buildTenants(sandboxURL: string, keyCount: number): Promise<Tenant[]> {
  const merchants = Math.ceil(keyCount / KEYS_PER_MERCHANT);
  const tenants: Tenant[] = [];
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
      const keys: Tenant[] = [];
      for (let k = 0; k < KEYS_PER_MERCHANT && m * KEYS_PER_MERCHANT + k < keyCount; k++) {
        const key = await admin(sandboxURL, `/merchants/${merchant.id}/api-keys`, {
          name: `bench ${k}`,
          access: 'read_write',
        });
        keys.push({ key: `Bearer ${key.key}`, wallets });
      }
      byMerchant[m] = keys;
    },
  );
  // Ranks interleave merchants, so the busiest keys belong to different merchants.
  for (let k = 0; k < KEYS_PER_MERCHANT; k++)
    for (const keys of byMerchant) {
      const tenant = keys?.[k];
      if (tenant) tenants.push(tenant);
    }
  return tenants;
}

interface MixRequest {
  key: string;
  screen: Screen;
  wallet: string;
}

function drawMix(tenants: Tenant[], count: number): MixRequest[] {
  const random = seededFloats(39);
  const rank = zipfSampler(tenants.length, 1, random);
  const screen = weightedPicker(MIX, random);
  return Array.from({ length: count }, () => {
    const tenant = tenants[rank()] as Tenant;
    return {
      key: tenant.key,
      screen: screen(),
      wallet: tenant.wallets[Math.floor(random() * tenant.wallets.length)] as string,
    };
  });
}

let idempotencySerial = 0;

/** The gateway request of one drawn screen. */
function gatewayRequest(r: MixRequest): { headers: Record<string, string>; body: string } {
  const headers = { authorization: r.key, 'content-type': 'application/json' };
  const body =
    r.screen === 'dashboard'
      ? graphql(DASHBOARD)
      : r.screen === 'walletScreen'
        ? graphql(WALLET_SCREEN, { id: r.wallet })
        : r.screen === 'activityFeed'
          ? graphql(ACTIVITY_FEED)
          : r.screen === 'depositsPage'
            ? graphql(DEPOSITS_PAGE, { id: r.wallet })
            : graphql(WITHDRAW, {
                input: {
                  walletId: r.wallet,
                  serviceFeeMode: 'EXCLUSIVE',
                  currencyCode: 'USDT',
                  amount: '0.01',
                  destination: DESTINATION,
                  idempotencyKey: `bench-${process.pid}-${idempotencySerial++}`,
                },
              });
  return { headers, body };
}

/** The optimal client's request of one drawn screen (test/bench/optimal-server.ts). */
function optimalRequest(r: MixRequest): {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
} {
  const headers: Record<string, string> = { authorization: r.key };
  if (r.screen === 'withdrawal') {
    return {
      method: 'POST',
      path: '/s4',
      headers: {
        ...headers,
        'content-type': 'application/json',
        'idempotency-key': `bench-${process.pid}-${idempotencySerial++}`,
      },
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
          : `/s5?wallet=${r.wallet}`;
  return { method: 'GET', path, headers };
}

interface LoadFigures {
  setup: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  cpuMsPerRequest: number | null;
  callsPerRequest: number;
  errors: number;
  requests: number;
}

async function load(
  kit: BenchKit,
  setup: string,
  sandboxURL: string,
  target: Started,
  next: () => { method?: 'GET' | 'POST'; path?: string; headers: Record<string, string>; body?: string },
  seconds: number,
  connections: number,
  warmup: number,
): Promise<LoadFigures> {
  const run = async (duration: number, times: number[] | null) => {
    let errors = 0;
    const instance = autocannon({
      url: target.url,
      connections,
      duration,
      requests: [
        {
          setupRequest: (request: object) => {
            const r = next();
            return {
              ...request,
              method: r.method ?? 'POST',
              path: r.path ?? '/graphql',
              headers: r.headers,
              body: r.body,
            };
          },
          onResponse: (status: number, body: string) => {
            if (status >= 400 || body.includes('"errors"')) errors++;
          },
        },
      ],
    } as unknown as autocannon.Options) as unknown as autocannon.Instance & Promise<autocannon.Result>;
    if (times)
      instance.on('response', (_c: unknown, _s: number, _b: number, ms: number) => void times.push(ms));
    const result = await instance;
    return { result, errors: errors + result.errors };
  };
  await run(warmup, null);
  const times: number[] = [];
  const callsBefore = await settledCount(sandboxURL);
  const cpuBefore = await kit.cpuMs(target.child.pid);
  const { result, errors } = await run(seconds, times);
  const cpuAfter = await kit.cpuMs(target.child.pid);
  const callsAfter = await settledCount(sandboxURL);
  times.sort((a, b) => a - b);
  const total = result.requests.total;
  return {
    setup,
    requestsPerSecond: Math.round(result.requests.average),
    p50: Number((times[Math.floor(times.length / 2)] ?? 0).toFixed(2)),
    p99: Number((times[Math.floor(times.length * 0.99)] ?? 0).toFixed(2)),
    cpuMsPerRequest:
      cpuBefore !== null && cpuAfter !== null && total
        ? Number(((cpuAfter - cpuBefore) / total).toFixed(3))
        : null,
    callsPerRequest: total ? Number(((callsAfter - callsBefore) / total).toFixed(2)) : 0,
    errors,
    requests: total,
  };
}

export async function manyMerchants(kit: BenchKit): Promise<void> {
  const keyCount = Number(kit.values.keys ?? 2_000);
  const seconds = kit.values.seconds ? Number(kit.values.seconds) : kit.quick ? 3 : 15;
  const warmup = kit.quick ? 1 : 10;
  const connections = Number(kit.values.connections ?? 16);
  const sandbox = await kit.startBenchSandbox(['--latency', '5']);
  kit.pinElsewhere(sandbox.child.pid);
  console.log(`many merchants: creating ${keyCount} keys…`);
  const tenants = await buildTenants(sandbox.url, keyCount);
  const mix = drawMix(tenants, 100_000);
  const gateway = await kit.startBenchGateway(sandbox.url);
  kit.pinUnderTest(gateway.child.pid);
  const optimal = await startProcess(
    'test/bench/optimal-server.ts',
    [],
    { LOG_LEVEL: 'warn', UPSTREAM_URL: sandbox.url, NODE_ENV: 'production' },
    /optimal client at (http:\/\/\S+)/,
  );
  kit.pinUnderTest(optimal.child.pid);
  const figures: LoadFigures[] = [];
  try {
    let drawn = 0;
    const nextMix = () => mix[drawn++ % mix.length] as MixRequest;
    const busiest = tenants[0] as Tenant;
    const identical: MixRequest = {
      key: busiest.key,
      screen: 'walletScreen',
      wallet: busiest.wallets[0] as string,
    };
    type Next = () => {
      method?: 'GET' | 'POST';
      path?: string;
      headers: Record<string, string>;
      body?: string;
    };
    const runs: [string, Started, Next][] = [
      [`gateway (defaults), ${keyCount} keys, Zipf mix of screens`, gateway, () => gatewayRequest(nextMix())],
      [
        'gateway (defaults), identical requests (one key’s wallet screen)',
        gateway,
        () => gatewayRequest(identical),
      ],
      [`optimal REST client, ${keyCount} keys, same mix`, optimal, () => optimalRequest(nextMix())],
      ['optimal REST client, identical requests', optimal, () => optimalRequest(identical)],
    ];
    for (const [setup, target, next] of runs) {
      drawn = 0;
      figures.push(await load(kit, setup, sandbox.url, target, next, seconds, connections, warmup));
      console.log(JSON.stringify(figures[figures.length - 1]));
    }
  } finally {
    await kit.stop(optimal.child);
    await kit.stop(gateway.child);
    await kit.stop(sandbox.child);
  }
  const [mixed, same, optimalMixed, optimalSame] = figures as [
    LoadFigures,
    LoadFigures,
    LoadFigures,
    LoadFigures,
  ];
  const ratio = (a: number | null, b: number | null) => (a !== null && b ? `×${(a / b).toFixed(2)}` : 'n/a');
  const lines = [
    '# Many merchants',
    '',
    `${new Date().toISOString()}; sandbox --latency 5; ${keyCount} keys (${KEYS_PER_MERCHANT} per merchant, ${WALLETS_PER_MERCHANT} wallets and ${WALLETS_PER_MERCHANT * DEPOSITS_PER_WALLET} deposits per merchant); keys drawn by Zipf (exponent 1), screens by ${Object.entries(
      MIX,
    )
      .map(([s, w]) => `${s} ${w} %`)
      .join(
        ', ',
      )} (withdrawals with a new Idempotency-Key each); ${connections} connections, ${warmup} s warm-up then ${seconds} s per setup; gateway in production mode with its defaults; ${kit.pinned ? 'process under test pinned to core 0' : 'not pinned'}.`,
    '',
    '| setup | req/s | p50 ms | p99 ms | CPU ms / request | REST calls / request | errors / requests |',
    '|---|---|---|---|---|---|---|',
    ...figures.map(
      (f) =>
        `| ${f.setup} | ${f.requestsPerSecond} | ${f.p50} | ${f.p99} | ${f.cpuMsPerRequest ?? 'n/a'} | ${f.callsPerRequest} | ${f.errors} / ${f.requests} |`,
    ),
    '',
    '| ratio | req/s | p50 | p99 | CPU / request | calls / request |',
    '|---|---|---|---|---|---|',
    `| gateway: mix ÷ identical | ${ratio(mixed.requestsPerSecond, same.requestsPerSecond)} | ${ratio(mixed.p50, same.p50)} | ${ratio(mixed.p99, same.p99)} | ${ratio(mixed.cpuMsPerRequest, same.cpuMsPerRequest)} | ${ratio(mixed.callsPerRequest, same.callsPerRequest)} |`,
    `| mix: gateway ÷ optimal client | ${ratio(mixed.requestsPerSecond, optimalMixed.requestsPerSecond)} | ${ratio(mixed.p50, optimalMixed.p50)} | ${ratio(mixed.p99, optimalMixed.p99)} | ${ratio(mixed.cpuMsPerRequest, optimalMixed.cpuMsPerRequest)} | ${ratio(mixed.callsPerRequest, optimalMixed.callsPerRequest)} |`,
    `| identical: gateway ÷ optimal client | ${ratio(same.requestsPerSecond, optimalSame.requestsPerSecond)} | ${ratio(same.p50, optimalSame.p50)} | ${ratio(same.p99, optimalSame.p99)} | ${ratio(same.cpuMsPerRequest, optimalSame.cpuMsPerRequest)} | ${ratio(same.callsPerRequest, optimalSame.callsPerRequest)} |`,
  ];
  const markdown = lines.join('\n');
  const dir = new URL('./results/', import.meta.url);
  await mkdir(dir, { recursive: true });
  await writeFile(new URL('many-merchants.md', dir), `${markdown}\n`);
  await writeFile(new URL('many-merchants.json', dir), `${JSON.stringify(figures, null, 2)}\n`);
  console.log(`\n${markdown}`);
}
