/**
 * `npm run soak [-- --minutes 10]`: mixed load on the gateway (reads, nested reads, mutations with
 * and without idempotency keys, and upstream faults switched on and off), sampling the gateway's
 * RSS and live heap every second. Reports growth after warm-up (the first fifth of the run):
 * the average of the last fifth against the average of the second fifth.
 */
import { fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { DEFAULT_ADMIN_TOKEN } from '../../src/sandbox/config.ts';
import { startProcess } from '../support/process.ts';

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '10' } } });
const seconds = Math.max(30, Math.round(Number(values.minutes) * 60));
const root = new URL('../..', import.meta.url).pathname;
const KEY = 'Bearer mw_sandbox_demo_acme_read_write';
const ADMIN = { authorization: `Bearer ${DEFAULT_ADMIN_TOKEN}`, 'content-type': 'application/json' };

const sandbox = await startProcess(
  'src/sandbox/main.ts',
  ['--port', '0', '--wallets', '20', '--deposits', '20000', '--withdrawals', '2000'],
  { LOG_LEVEL: 'warn' },
  /Try: curl .* (http:\/\/\S+)\/external\/v1\/wallets/,
);
const samples: { rss: number; heapUsed: number }[] = [];
const gatewayChild = fork(new URL('./gateway-child.ts', import.meta.url).pathname, [], {
  cwd: root,
  env: { ...process.env, UPSTREAM_URL: sandbox.url },
  execArgv: ['--expose-gc'],
});
const gatewayURL = await new Promise<string>((resolve) => {
  gatewayChild.on('message', (message: { type: string; url?: string; rss?: number; heapUsed?: number }) => {
    if (message.type === 'ready' && message.url) resolve(message.url);
    if (message.type === 'memory') samples.push({ rss: message.rss ?? 0, heapUsed: message.heapUsed ?? 0 });
  });
});

const wallets = await fetch(`${sandbox.url}/external/v1/wallets?size=20`, {
  headers: { authorization: KEY },
});
const walletIds = ((await wallets.json()) as { data: { id: string }[] }).data.map((w) => w.id);
const body = (query: string, variables: Record<string, unknown> = {}) => JSON.stringify({ query, variables });
let counter = 0;
const requests: autocannon.Request[] = [
  {
    body: body(
      '{ wallets(first: 20) { nodes { address assets { currencyCode balance { availableAmount } } } } }',
    ),
  },
  { body: body('{ deposits(first: 50) { nodes { amount wallet { address } } pageInfo { endCursor } } }') },
  {
    setupRequest: (request) => ({
      ...request,
      body: body(
        'query($id: ID!) { wallet(id: $id) { deposits(first: 10) { nodes { amount } } withdrawalIntents(first: 10) { nodes { amount } } } }',
        {
          id: walletIds[counter++ % walletIds.length],
        },
      ),
    }),
  },
  {
    setupRequest: (request) => ({
      ...request,
      body: body(
        'mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename } }',
        {
          input: {
            walletId: walletIds[counter % walletIds.length],
            serviceFeeMode: 'EXCLUSIVE',
            currencyCode: 'USDT',
            amount: '0.01',
            destination: { type: 'crypto', rail: 'tron', identifier: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7' },
            // Every other mutation is a retry of an earlier key: replays and reconciliation.
            idempotencyKey: counter++ % 2 ? `soak-${counter}` : `soak-${counter - 11}`,
          },
        },
      ),
    }),
  },
];

// Faults come and go every 5 s: 500s, slow answers and resets on some routes.
const faults = [
  { method: 'GET', path: '/external/v1/deposits', status: 500, times: 20 },
  { method: 'GET', path: '/external/v1/wallets', latencyMs: 300, times: 20 },
  { method: 'GET', path: '/external/v1/withdrawal-intents', reset: true, times: 10 },
  { method: 'POST', path: '/external/v1/withdrawal-intents', status: 503, times: 5 },
];
let faultIndex = 0;
const faultTimer = setInterval(() => {
  void fetch(`${sandbox.url}/sandbox/v1/faults`, {
    method: 'POST',
    headers: ADMIN,
    body: JSON.stringify(faults[faultIndex++ % faults.length]),
  });
}, 5_000);

console.log(`soak: ${seconds} s of mixed load on ${gatewayURL}`);
const result = await autocannon({
  url: `${gatewayURL}/graphql`,
  method: 'POST',
  headers: { authorization: KEY, 'content-type': 'application/json' },
  connections: 8,
  duration: seconds,
  requests,
});
clearInterval(faultTimer);

const fifth = Math.max(1, Math.floor(samples.length / 5));
const average = (list: { rss: number; heapUsed: number }[], key: 'rss' | 'heapUsed') =>
  list.reduce((sum, s) => sum + s[key], 0) / Math.max(1, list.length);
const baseline = samples.slice(fifth, 2 * fifth);
const end = samples.slice(-fifth);
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
const report = {
  seconds,
  requests: result.requests.total,
  requestsPerSecond: Math.round(result.requests.average),
  non2xx: result.non2xx,
  errors: result.errors,
  samples: samples.length,
  heapAfterWarmupMiB: mib(average(baseline, 'heapUsed')),
  heapAtEndMiB: mib(average(end, 'heapUsed')),
  heapGrowthPercent: ((average(end, 'heapUsed') / average(baseline, 'heapUsed') - 1) * 100).toFixed(1),
  rssAfterWarmupMiB: mib(average(baseline, 'rss')),
  rssAtEndMiB: mib(average(end, 'rss')),
  rssGrowthPercent: ((average(end, 'rss') / average(baseline, 'rss') - 1) * 100).toFixed(1),
};
console.table(report);

gatewayChild.kill('SIGTERM');
sandbox.child.kill('SIGTERM');
