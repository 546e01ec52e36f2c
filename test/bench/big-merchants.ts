/**
 * A benchmark mode of test/bench/run.ts about merchants as they are in production rather than as
 * the demo world has them (the many-merchant mix is test/bench/many-merchants.ts).
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
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { DEFAULT_ADMIN_TOKEN } from '../../src/sandbox/config.ts';

type Started = { child: ChildProcess; url: string };

/** What run.ts hands over: its options and its way of starting and pinning processes. */
export interface BenchKit {
  values: Record<string, unknown>;
  quick: boolean;
  pinned: boolean;
  startBenchSandbox(args: string[]): Promise<Started>;
  startBenchGateway(upstreamURL: string, env?: Record<string, string>, cwd?: string): Promise<Started>;
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

async function adminGet(sandboxURL: string, path: string): Promise<unknown> {
  const response = await fetch(`${sandboxURL}/sandbox/v1${path}`, { headers: { authorization: ADMIN } });
  return ((await response.json()) as { data: unknown }).data;
}

async function adminPost(sandboxURL: string, path: string, body: unknown): Promise<unknown> {
  const response = await fetch(`${sandboxURL}/sandbox/v1${path}`, {
    method: 'POST',
    headers: { authorization: ADMIN, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { data: unknown }).data;
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
  // A merchant's new keys (integrations, rotations): each request a first view with a key the
  // gateway has never seen, after the rounds above (the merchant's index built by then).
  const merchants = (await adminGet(sandboxURL, '/merchants')) as { id: string; name: string }[];
  const acme = merchants.find((m) => /acme/i.test(m.name));
  if (acme) {
    const keyFor = async (i: number) => {
      const created = (await adminPost(sandboxURL, `/merchants/${acme.id}/api-keys`, {
        name: `first view ${i}`,
        access: 'read_write',
      })) as { key: string };
      return `Bearer ${created.key}`;
    };
    const fresh = await measureScreen(
      kit,
      sandboxURL,
      gateway,
      'wallet screen, quiet wallet, a new key',
      graphql(WALLET_SCREEN, { id: quiet }),
      1 + depositPages + intentPages,
      Math.min(requests, 10),
      undefined,
      keyFor,
    );
    console.log(
      `  new keys ${fresh.screen}: ${fresh.callsMedian}/${fresh.fewest} calls, p50 ${fresh.p50} ms, errors ${JSON.stringify(fresh.errors)}`,
    );
    rounds.push({ label: 'a new key of the merchant for each request', screens: [fresh] });
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
  /** The key of request i (default the demo key): a new one per request for a first view each. */
  keyFor?: (i: number) => Promise<string>,
): Promise<ScreenFigures> {
  const times: number[] = [];
  const calls: number[] = [];
  const errors: Record<string, number> = {};
  const started = performance.now();
  const cpuBefore = await kit.cpuMs(gateway.child.pid);
  let cpuInRequests = 0;
  for (let i = 0; i < requests; i++) {
    if (i >= 3 && performance.now() - started > SCREEN_BUDGET_MS) break;
    const key = keyFor ? await keyFor(i) : KEY;
    const before = await settledCount(sandboxURL);
    const cpuStart = await kit.cpuMs(gateway.child.pid);
    const answer = await ask(gateway.url, body, key);
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
