/**
 * The benchmark's generated peer: what a team gets by generating a GraphQL gateway from the REST
 * API's OpenAPI description instead of writing one. test/bench/peer/ holds an OpenAPI 3 document
 * of the REST API (openapi.yaml, from the spec), a GraphQL Mesh composition of it
 * (mesh.config.ts, @graphql-mesh/compose-cli + @omnigraph/openapi) and Hive Gateway's
 * configuration (gateway.config.ts: the caller's Authorization header goes to every REST call).
 * Its dependencies are its own (test/bench/peer/package.json and lock, exact versions), so the
 * product's `npm ci` stays lean.
 *
 * Interface:
 * - `startPeer(upstreamURL)` installs the peer's dependencies on first use (`npm ci` in
 *   test/bench/peer when its node_modules is missing: ~20 s with npm's cache warm, ~40 s cold),
 *   composes supergraph.graphql when it is missing or older than its inputs (~1 s), and starts the
 *   Hive Gateway CLI as one Node process (`--fork 1`, NODE_ENV=production, its defaults otherwise)
 *   in front of `upstreamURL` (~1.5 s). It resolves with startProcess's
 *   result: `child` (pin it by `child.pid`; stop it with SIGTERM) and `url`, the origin: GraphQL is
 *   at `${url}/graphql`, as for the gateway.
 * - `PEER_QUERIES.S1|S2|S3`: each screen's GraphQL query against the generated schema, with
 *   `variables(walletId)` where the screen needs the wallet; `peerRequestBody(screen, walletId)`
 *   is the JSON body to POST. The generated schema has no links between resources and no wallet
 *   filter, so S2 and S3 read what the optimal REST client reads and leave the join to the caller:
 *   - S1: `listWallets(size: 20)`: the wallets with address and balances. Same data as ours.
 *   - S2: `listDeposits(size: 50)` and `listWallets(size: 1000)` in one request; the caller maps
 *     each deposit's `wallet.id` to that wallet's address (the optimal client's two REST calls).
 *   - S3: `getWallet(id)`, `listDeposits(size: 1000)` and `listWithdrawalIntents(size: 1000)`:
 *     the merchant's latest 1000 of each, every wallet's, with `wallet { id }`; the caller keeps the
 *     wallet's first 10 (the optimal client's three REST calls, filtered on the client instead). So
 *     its response holds up to 2000 items where ours holds 20. `PEER_S3_MERCHANT_WIDE` is the cheap
 *     reading (`size: 10`): the merchant's latest 10 of each across all wallets, not the wallet's.
 *   Responses are unions (`… | ErrorResponse`) because the document lists each endpoint's errors;
 *   the queries select the success member.
 *
 *   node test/bench/peer.ts --check
 *
 * starts a sandbox (the bench's world), the peer and our gateway (as the bench starts it, and once
 * more with query deduplication off), checks each one's three screens against the REST API's own
 * answers (exit code 1 when one differs), and measures each screen for 5 s at 16 connections on
 * each, one after the other (each pinned to core 0 when `taskset` and two cores are there; sandbox
 * and load generator on core 1). Rough figures: a minute and a half, on a machine others may use.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { readFile, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import { freePort, startProcess } from '../support/process.ts';

const PEER_DIR = new URL('./peer/', import.meta.url).pathname;
const REPO_DIR = new URL('../../', import.meta.url).pathname;
const GATEWAY_BIN = 'node_modules/@graphql-hive/gateway/dist/bin.js';
const COMPOSE_BIN = 'node_modules/@graphql-mesh/compose-cli/esm/bin.js';
const SUPERGRAPH = 'supergraph.graphql';
/** What the composed supergraph is made from: a newer one of these composes it again. */
const COMPOSE_INPUTS = ['openapi.yaml', 'mesh.config.ts', 'package-lock.json'];
const INSTALL_TIMEOUT_MS = 5 * 60_000;
const COMPOSE_TIMEOUT_MS = 60_000;

export type PeerScreen = 'S1' | 'S2' | 'S3';

export interface PeerQuery {
  query: string;
  /** The variables for the wallet the screen shows (S3); absent when the screen needs none. */
  variables?: (walletId: string) => Record<string, unknown>;
}

const S3_QUERY = (size: number) =>
  `query ($id: String!) { getWallet(id: $id) { ... on WalletResponse { data { id networkEndpoint { identifier } assets { currencyCode balance { availableAmount } } } } } listDeposits(size: ${size}) { ... on DepositListResponse { data { id amount status wallet { id } } } } listWithdrawalIntents(size: ${size}) { ... on WithdrawalIntentListResponse { data { id amount status wallet { id } } } } }`;

/** Each benchmark screen against the generated schema; see the top of this file for what each returns. */
export const PEER_QUERIES: Record<PeerScreen, PeerQuery> = {
  S1: {
    query:
      '{ listWallets(size: 20) { ... on WalletListResponse { data { id networkEndpoint { identifier } assets { currencyCode balance { availableAmount lockedAmount } } } } } }',
  },
  S2: {
    query:
      '{ listDeposits(size: 50) { ... on DepositListResponse { data { id amount status createdAt wallet { id } } } } listWallets(size: 1000) { ... on WalletListResponse { data { id networkEndpoint { identifier } } } } }',
  },
  S3: { query: S3_QUERY(1000), variables: (walletId) => ({ id: walletId }) },
};

/** S3 read the cheap way: the merchant's latest 10 deposits and intents, of any wallet. */
export const PEER_S3_MERCHANT_WIDE: PeerQuery = {
  query: S3_QUERY(10),
  variables: (walletId) => ({ id: walletId }),
};

/** The JSON body to POST to `${url}/graphql` for a screen (S3 shows `walletId`). */
export function peerRequestBody(screen: PeerScreen | PeerQuery, walletId = ''): string {
  const { query, variables } = typeof screen === 'string' ? PEER_QUERIES[screen] : screen;
  return JSON.stringify({ query, variables: variables?.(walletId) ?? {} });
}

/** Runs a command to completion within `timeoutMs`; rejects with its output when it fails. */
function run(command: string, args: string[], cwd: string, timeoutMs: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', (error) => reject(new Error(`${what}: could not run ${command}: ${error.message}`)));
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `${what} failed (${signal ? `killed by ${signal}, time limit ${timeoutMs / 1000} s` : `exit code ${code}`}) in ${cwd}; its output ends:\n${output.slice(-4000)}`,
          ),
        );
    });
  });
}

let installing: Promise<void> | undefined;

/**
 * Installs the peer's locked dependencies (`npm ci --ignore-scripts`; nothing in them needs an
 * install script) unless they are there. Once per process; several callers share the one install.
 */
export function ensurePeerInstalled(): Promise<void> {
  if (existsSync(`${PEER_DIR}${GATEWAY_BIN}`) && existsSync(`${PEER_DIR}${COMPOSE_BIN}`)) {
    return Promise.resolve();
  }
  installing ??= (async () => {
    const started = performance.now();
    console.error(`peer: installing its dependencies (npm ci in ${PEER_DIR}; 20 to 40 s the first time)…`);
    await run(
      'npm',
      ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
      PEER_DIR,
      INSTALL_TIMEOUT_MS,
      'peer: npm ci',
    );
    console.error(`peer: installed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  })().finally(() => {
    installing = undefined;
  });
  return installing;
}

let composing: Promise<void> | undefined;

/**
 * Composes test/bench/peer/supergraph.graphql with mesh-compose unless it is newer than its inputs.
 * It is written beside and renamed into place, so a half-written file is never read; composing
 * again under a running peer would end that peer's watch of the file, so it happens only when an
 * input changed.
 */
export function composePeerSupergraph(): Promise<void> {
  const target = `${PEER_DIR}${SUPERGRAPH}`;
  const built = existsSync(target) ? statSync(target).mtimeMs : 0;
  if (COMPOSE_INPUTS.every((input) => statSync(`${PEER_DIR}${input}`).mtimeMs < built)) {
    return Promise.resolve();
  }
  composing ??= (async () => {
    const partial = `supergraph.partial-${process.pid}.graphql`;
    try {
      await run(
        process.execPath,
        [COMPOSE_BIN, '--output', partial],
        PEER_DIR,
        COMPOSE_TIMEOUT_MS,
        'peer: mesh-compose',
      );
      await rename(`${PEER_DIR}${partial}`, target);
    } finally {
      await rm(`${PEER_DIR}${partial}`, { force: true });
    }
  })().finally(() => {
    composing = undefined;
  });
  return composing;
}

/**
 * Starts the generated peer (Hive Gateway serving the Mesh supergraph) in front of the REST API at
 * `upstreamURL`, installing and composing first when needed. `url` is its origin (GraphQL at
 * `${url}/graphql`); `child` is the gateway's own Node process, one worker, to pin and to stop.
 */
export async function startPeer(upstreamURL: string): ReturnType<typeof startProcess> {
  await ensurePeerInstalled();
  await composePeerSupergraph();
  // Another process may take the free port between our close and the gateway's listen: try again.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await startProcess(
        GATEWAY_BIN,
        ['supergraph', SUPERGRAPH, '--config-path', 'gateway.config.ts'],
        {
          NODE_ENV: 'production',
          MW_REST_URL: upstreamURL,
          HOST: '127.0.0.1',
          PORT: String(port),
          FORK: '1',
          NO_COLOR: '1',
        },
        /Listening on (http:\/\/127\.0\.0\.1:\d+)/,
        PEER_DIR,
      );
    } catch (error) {
      if (attempt >= 3 || !String(error).includes('EADDRINUSE')) throw error;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// `node test/bench/peer.ts --check`

const KEY = 'Bearer mw_sandbox_demo_acme_read_write';

type Item = { id: string; amount: string; status: string; wallet: { id: string } };
type Asset = { currencyCode: string; balance: { availableAmount: string; lockedAmount?: string } };
type RestWallet = { id: string; networkEndpoint: { identifier: string }; assets: Asset[] };

async function rest<T>(sandboxURL: string, path: string): Promise<T> {
  const response = await fetch(`${sandboxURL}/external/v1${path}`, { headers: { authorization: KEY } });
  const body = (await response.json()) as { data: T };
  if (!response.ok) throw new Error(`REST GET ${path}: ${response.status} ${JSON.stringify(body)}`);
  return body.data;
}

/** A GraphQL answer's data and its size in bytes; throws on any error. */
async function graphql<T>(url: string, body: string): Promise<{ data: T; bytes: number }> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { authorization: KEY, 'content-type': 'application/json' },
    body,
  });
  const text = await response.text();
  const result = JSON.parse(text) as { data?: T; errors?: unknown[] };
  if (!response.ok || result.errors || !result.data) {
    throw new Error(`${url}/graphql answered ${response.status}: ${text.slice(0, 2000)}`);
  }
  return { data: result.data, bytes: Buffer.byteLength(text) };
}

/** What a screen shows, one comparable line per wallet, deposit or intent, whichever API gave it. */
type ScreenLines = Record<PeerScreen, string[]>;

const walletLine = (id: string, address: string, assets: Asset[]) =>
  `${id} ${address} ${assets.map((a) => `${a.currencyCode}:${a.balance.availableAmount}/${a.balance.lockedAmount ?? '-'}`).join(',')}`;
const itemLine = (kind: string) => (item: { id: string; amount: string; status: string }) =>
  `${kind} ${item.id} ${item.amount} ${item.status}`;
/** The wallet's first 10 of a newest-first list of the merchant's items. */
const walletsFirst10 = <T extends Item>(items: T[], walletId: string) =>
  items.filter((item) => item.wallet.id === walletId).slice(0, 10);

/** The screens from the REST API's own answers (the optimal client's calls). */
async function restScreens(sandboxURL: string, walletId: string): Promise<ScreenLines> {
  const wallets = await rest<RestWallet[]>(sandboxURL, '/wallets?page=1&size=20');
  const allWallets = await rest<RestWallet[]>(sandboxURL, '/wallets?page=1&size=1000');
  const deposits = await rest<(Item & { createdAt: string })[]>(sandboxURL, '/deposits?page=1&size=50');
  const wallet = await rest<RestWallet>(sandboxURL, `/wallets/${walletId}`);
  const recentDeposits = await rest<Item[]>(sandboxURL, '/deposits?page=1&size=1000');
  const recentIntents = await rest<Item[]>(sandboxURL, '/withdrawal-intents?page=1&size=1000');
  const address = new Map(allWallets.map((w) => [w.id, w.networkEndpoint.identifier]));
  const available = (assets: Asset[]) =>
    assets.map((a) => ({
      currencyCode: a.currencyCode,
      balance: { availableAmount: a.balance.availableAmount },
    }));
  return {
    S1: wallets.map((w) => walletLine(w.id, w.networkEndpoint.identifier, w.assets)),
    S2: deposits.map((d) => `${d.id} ${d.amount} ${d.status} ${d.createdAt} ${address.get(d.wallet.id)}`),
    S3: [
      walletLine(walletId, wallet.networkEndpoint.identifier, available(wallet.assets)),
      ...walletsFirst10(recentDeposits, walletId).map(itemLine('deposit')),
      ...walletsFirst10(recentIntents, walletId).map(itemLine('intent')),
    ],
  };
}

/** The peer's answers, joined and filtered on the client as PEER_QUERIES describes, and their sizes. */
async function peerScreens(url: string, walletId: string) {
  const s1 = await graphql<{ listWallets: { data: RestWallet[] } }>(url, peerRequestBody('S1'));
  const s2 = await graphql<{
    listDeposits: { data: (Item & { createdAt: string })[] };
    listWallets: { data: RestWallet[] };
  }>(url, peerRequestBody('S2'));
  const s3 = await graphql<{
    getWallet: { data: RestWallet };
    listDeposits: { data: Item[] };
    listWithdrawalIntents: { data: Item[] };
  }>(url, peerRequestBody('S3', walletId));
  const address = new Map(s2.data.listWallets.data.map((w) => [w.id, w.networkEndpoint.identifier]));
  const wallet = s3.data.getWallet.data;
  const lines: ScreenLines = {
    S1: s1.data.listWallets.data.map((w) => walletLine(w.id, w.networkEndpoint.identifier, w.assets)),
    S2: s2.data.listDeposits.data.map(
      (d) => `${d.id} ${d.amount} ${d.status} ${d.createdAt} ${address.get(d.wallet.id)}`,
    ),
    S3: [
      walletLine(wallet.id, wallet.networkEndpoint.identifier, wallet.assets),
      ...walletsFirst10(s3.data.listDeposits.data, walletId).map(itemLine('deposit')),
      ...walletsFirst10(s3.data.listWithdrawalIntents.data, walletId).map(itemLine('intent')),
    ],
  };
  return { lines, bytes: { S1: s1.bytes, S2: s2.bytes, S3: s3.bytes } };
}

/** The benchmark's own queries on our gateway, as test/bench/run.ts sends them. */
const OUR_QUERIES: Record<PeerScreen, PeerQuery> = {
  S1: {
    query:
      '{ wallets(first: 20) { nodes { id address assets { currencyCode balance { availableAmount lockedAmount } } } } }',
  },
  S2: { query: '{ deposits(first: 50) { nodes { id amount status createdAt wallet { address } } } }' },
  S3: {
    query:
      'query($id: ID!) { wallet(id: $id) { address assets { currencyCode balance { availableAmount } } deposits(first: 10) { nodes { id amount status } } withdrawalIntents(first: 10) { nodes { id amount status } } } }',
    variables: (walletId) => ({ id: walletId }),
  },
};

/**
 * Our answers in the REST API's terms: global IDs decoded (Relay's base64 of `Type:id`) and enum
 * values in the REST API's lower case, the two ways our schema writes the same data differently.
 */
async function ourScreens(url: string, walletId: string) {
  type Node = { id: string; amount: string; status: string };
  type Connection<T> = { nodes: T[] };
  const rawId = (id: string) => Buffer.from(id, 'base64').toString('utf8').split(':').slice(1).join(':');
  const asREST = <T extends Node>(node: T) => ({
    ...node,
    id: rawId(node.id),
    status: node.status.toLowerCase(),
  });
  const s1 = await graphql<{ wallets: Connection<{ id: string; address: string; assets: Asset[] }> }>(
    url,
    peerRequestBody(OUR_QUERIES.S1),
  );
  const s2 = await graphql<{
    deposits: Connection<Node & { createdAt: string; wallet: { address: string } }>;
  }>(url, peerRequestBody(OUR_QUERIES.S2));
  const s3 = await graphql<{
    wallet: {
      address: string;
      assets: Asset[];
      deposits: Connection<Node>;
      withdrawalIntents: Connection<Node>;
    };
  }>(url, peerRequestBody(OUR_QUERIES.S3, walletId));
  const lines: ScreenLines = {
    S1: s1.data.wallets.nodes.map((w) => walletLine(rawId(w.id), w.address, w.assets)),
    S2: s2.data.deposits.nodes
      .map(asREST)
      .map((d) => `${d.id} ${d.amount} ${d.status} ${d.createdAt} ${d.wallet.address}`),
    S3: [
      walletLine(walletId, s3.data.wallet.address, s3.data.wallet.assets),
      ...s3.data.wallet.deposits.nodes.map(asREST).map(itemLine('deposit')),
      ...s3.data.wallet.withdrawalIntents.nodes.map(asREST).map(itemLine('intent')),
    ],
  };
  return { lines, bytes: { S1: s1.bytes, S2: s2.bytes, S3: s3.bytes } };
}

/** Pins a process (all its threads) to one core; false without taskset or a second core. */
function pin(pid: number | undefined, core: number): boolean {
  if (!pid || os.cpus().length < 2) return false;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** Our gateway as the bench starts it (test/bench/run.ts, startBenchGateway). */
function startOurs(sandboxURL: string, env: Record<string, string> = {}) {
  return startProcess(
    'src/main.ts',
    [],
    {
      LOG_LEVEL: 'warn',
      UPSTREAM_URL: sandboxURL,
      PORT: '0',
      UPSTREAM_CACHE_TTL_MS: '0',
      NODE_ENV: 'production',
      GRAPHIQL: 'false',
      METRICS_PORT: 'same',
      ...env,
    },
    /gateway: (http:\/\/\S+)\/graphql/,
    REPO_DIR,
  );
}

async function check(): Promise<void> {
  const { default: autocannon } = await import('autocannon');
  const { DEFAULT_ADMIN_TOKEN } = await import('../../src/sandbox/config.ts');
  const prepared = performance.now();
  await ensurePeerInstalled();
  await composePeerSupergraph();
  console.log(`peer installed and composed (${(performance.now() - prepared).toFixed(0)} ms this time)`);
  const pinned = pin(process.pid, 1);
  // The bench's world: 20 wallets of the demo merchant, 100 000 deposits, 10 000 withdrawals.
  const sandbox = await startProcess(
    'src/sandbox/main.ts',
    ['--port', '0', '--wallets', '20', '--deposits', '100000', '--withdrawals', '10000'],
    { LOG_LEVEL: 'warn' },
    /Try: curl .* (http:\/\/\S+)\/external\/v1\/wallets/,
    REPO_DIR,
  );
  pin(sandbox.child.pid, 1);
  const children: ChildProcess[] = [sandbox.child];
  let failed = false;
  try {
    const peerStarted = performance.now();
    const peer = await startPeer(sandbox.url);
    children.push(peer.child);
    console.log(`peer started in ${(performance.now() - peerStarted).toFixed(0)} ms at ${peer.url}`);
    const ours = await startOurs(sandbox.url);
    children.push(ours.child);
    const undeduplicated = await startOurs(sandbox.url, { QUERY_DEDUPLICATION: 'false' });
    children.push(undeduplicated.child);
    for (const started of [peer, ours, undeduplicated]) pin(started.child.pid, 0);

    const walletId = (await rest<{ id: string }[]>(sandbox.url, '/wallets?page=1&size=20'))[0]?.id ?? '';
    const expected = await restScreens(sandbox.url, walletId);
    const peerAnswers = await peerScreens(peer.url, walletId);
    const ourAnswers = await ourScreens(ours.url, walletId);
    for (const screen of ['S1', 'S2', 'S3'] as const) {
      const want = JSON.stringify(expected[screen]);
      for (const [who, answers] of [
        ['peer', peerAnswers],
        ['ours', ourAnswers],
      ] as const) {
        const same = expected[screen].length > 1 && JSON.stringify(answers.lines[screen]) === want;
        if (!same) failed = true;
        console.log(
          `${screen} ${who}: ${same ? 'same as the REST API' : 'DIFFERENT from the REST API'}, ${answers.lines[screen].length} lines, response ${answers.bytes[screen]} bytes`,
        );
        if (!same)
          console.log({ want: expected[screen].slice(0, 3), got: answers.lines[screen].slice(0, 3) });
      }
    }

    const upstreamCount = async () => {
      const response = await fetch(`${sandbox.url}/sandbox/v1/stats`, {
        headers: { authorization: `Bearer ${DEFAULT_ADMIN_TOKEN}` },
      });
      return ((await response.json()) as { data: { externalRequests: number } }).data.externalRequests;
    };
    // autocannon ends a run with requests still in flight; their REST calls come after it.
    const settledUpstreamCount = async () => {
      let count = await upstreamCount();
      for (let polls = 0; polls < 100; polls++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const next = await upstreamCount();
        if (next === count) break;
        count = next;
      }
      return count;
    };
    /** CPU time (user + system) a process has used so far, in ms, from Linux's /proc. */
    const cpuMs = async (pid: number | undefined) => {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
      const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
      return fields ? ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 : Number.NaN;
    };
    const load = async ({ url, child }: { url: string; child: ChildProcess }, body: string) => {
      const options = {
        url: `${url}/graphql`,
        method: 'POST' as const,
        headers: { authorization: KEY, 'content-type': 'application/json' },
        body,
        connections: 16,
      };
      await autocannon({ ...options, duration: 2 });
      const before = await settledUpstreamCount();
      const cpuBefore = await cpuMs(child.pid);
      const result = await autocannon({ ...options, duration: 5 });
      const cpu = (await cpuMs(child.pid)) - cpuBefore;
      const calls = (await settledUpstreamCount()) - before;
      const answered = result.requests.total;
      return {
        rps: Math.round(result.requests.average),
        latency: `${result.latency.p50} / ${result.latency.p99}`,
        errors: result.errors + result.non2xx,
        // In-flight requests dropped at the end made calls too: a little over the true figure.
        calls: answered ? (calls / answered).toFixed(2) : '?',
        cpu: answered ? Math.round((cpu * 1000) / answered) : '?',
      };
    };
    const rows = [
      '| screen | peer req/s | ours req/s | ours ÷ peer | ours, dedup off, req/s | ÷ peer | p50 / p99 ms: peer, ours, ours dedup off | REST calls per op: peer, ours, dedup off | CPU µs per op: peer, ours, dedup off | errors |',
      '|---|---|---|---|---|---|---|---|---|---|',
    ];
    const screens: [string, string, PeerScreen][] = [
      ['S1', peerRequestBody('S1'), 'S1'],
      ['S2', peerRequestBody('S2'), 'S2'],
      ['S3', peerRequestBody('S3', walletId), 'S3'],
      [
        'S3, peer merchant-wide (size 10, not the same data)',
        peerRequestBody(PEER_S3_MERCHANT_WIDE, walletId),
        'S3',
      ],
    ];
    for (const [name, peerBody, ourScreen] of screens) {
      const ourBody = peerRequestBody(OUR_QUERIES[ourScreen], walletId);
      const p = await load(peer, peerBody);
      const o = await load(ours, ourBody);
      const u = await load(undeduplicated, ourBody);
      const row = `| ${name} | ${p.rps} | ${o.rps} | ×${(o.rps / p.rps).toFixed(2)} | ${u.rps} | ×${(u.rps / p.rps).toFixed(2)} | ${p.latency}, ${o.latency}, ${u.latency} | ${p.calls}, ${o.calls}, ${u.calls} | ${p.cpu}, ${o.cpu}, ${u.cpu} | ${p.errors + o.errors + u.errors} |`;
      console.log(row);
      rows.push(row);
    }
    console.log(
      `\n5 s at 16 connections after 2 s of warm-up, one process under load at a time, ${pinned ? 'each pinned to core 0 (sandbox and autocannon on core 1)' : 'not pinned'}; ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, Node ${process.version}\n${rows.join('\n')}`,
    );
  } finally {
    for (const child of children.reverse()) await stop(child);
  }
  if (failed) {
    console.log('check FAILED: a screen differs from the REST API');
    process.exitCode = 1;
  }
}

if (import.meta.main && process.argv.includes('--check')) await check();
