/**
 * `npm run bench -- --delivery` (with `--quick` for a run under a minute): what compression and
 * conditional GETs give and cost, side by side in one run. One sandbox (the demo merchant, 20
 * wallets, 1000 deposits), one gateway with its sharing off (each request executes on its own, so
 * the CPU is one request's), pinned like the other runs. For each screen of schema/operations
 * (dashboard, wallet screen, deferred wallet screen over multipart/mixed, activity feed):
 *
 * - the bytes of its answer body as sent, identity, gzip and brotli (a raw HTTP client: no decoding);
 * - the gateway's CPU per request and req/s for each, in alternating rounds (identity, gzip, br;
 *   gzip, br, identity; …), medians, as ratios to identity;
 * - a revalidating GET (If-None-Match with the answer's ETag): its status and bytes.
 *
 * And what an open compressed SSE stream holds: `STREAMS` subscriptions opened per coding on a
 * fresh gateway each, the gateway's resident memory before and after, per stream.
 *
 * Writes test/bench/results/delivery.md.
 */

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import os from 'node:os';
import autocannon from 'autocannon';
import type { BenchKit } from './big-merchants.ts';

const KEY = 'Bearer mw_sandbox_demo_acme_read_write';
const SHARING_OFF = { UPSTREAM_CACHE_TTL_MS: '0', QUERY_DEDUPLICATION: 'false' };
const CODINGS = ['identity', 'gzip', 'br'] as const;
type CodingName = (typeof CODINGS)[number];
const STREAMS = 200;

const operation = async (name: string) =>
  readFile(new URL(`../../schema/operations/${name}.graphql`, import.meta.url), 'utf8');

interface Raw {
  status: number;
  bytes: number;
  headers: Record<string, string | string[] | undefined>;
}

/** One request with Node's raw client: the body's bytes as they came over the wire. */
function raw(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: init.method, headers: init.headers }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/** Resident set size of a process now, from Linux's /proc (VmRSS), in KiB. */
async function rssKiB(pid: number | undefined): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return 0;
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

const ratio = (value: number, base: number) => (base ? (value / base).toFixed(2) : '–');

export async function delivery(kit: BenchKit): Promise<void> {
  const { quick } = kit;
  const duration = quick ? 1 : 5;
  const rounds = quick ? 1 : 3;
  const warmup = quick ? 0.5 : 5;
  const connections = 16;
  const sandbox = await kit.startBenchSandbox(['--deposits', '1000', '--withdrawals', '100']);
  kit.pinElsewhere(sandbox.child.pid);
  const gateway = await kit.startBenchGateway(sandbox.url, SHARING_OFF);
  kit.pinUnderTest(gateway.child.pid);
  const rows: string[] = [];
  const memoryRows: string[] = [];
  try {
    const wallets = await fetch(`${sandbox.url}/external/v1/wallets?size=20`, {
      headers: { authorization: KEY },
    });
    const walletId = ((await wallets.json()) as { data: { id: string }[] }).data[0]?.id ?? '';
    const screens: { name: string; query: string; variables: Record<string, unknown>; accept: string }[] = [
      { name: 'Dashboard', query: await operation('dashboard'), variables: {}, accept: 'application/json' },
      {
        name: 'Wallet screen',
        query: await operation('wallet-screen'),
        variables: { id: walletId },
        accept: 'application/json',
      },
      {
        name: 'Wallet screen, deferred (multipart)',
        query: await operation('wallet-screen-deferred'),
        variables: { id: walletId },
        accept: 'multipart/mixed',
      },
      {
        name: 'Activity feed',
        query: await operation('activity-feed'),
        variables: {},
        accept: 'application/json',
      },
    ];
    const url = `${gateway.url}/graphql`;
    for (const screen of screens) {
      const body = JSON.stringify({ query: screen.query, variables: screen.variables });
      const headersFor = (coding: CodingName): Record<string, string> => ({
        authorization: KEY,
        'content-type': 'application/json',
        accept: screen.accept,
        ...(coding !== 'identity' && { 'accept-encoding': coding }),
      });
      const bytes = {} as Record<CodingName, number>;
      for (const coding of CODINGS) {
        const answer = await raw(url, { method: 'POST', headers: headersFor(coding), body });
        const sent = answer.headers['content-encoding'] ?? 'identity';
        // Streams are gzip only: a client that accepts only brotli gets one as it is.
        const expected = screen.accept !== 'application/json' && coding === 'br' ? 'identity' : coding;
        if (answer.status !== 200 || sent !== expected) {
          throw new Error(`${screen.name}, ${coding}: status ${answer.status}, Content-Encoding ${sent}`);
        }
        bytes[coding] = answer.bytes;
      }
      // A revalidation of the same screen over GET (plain JSON screens only: streams carry no ETag).
      let revalidation = '–';
      if (screen.accept === 'application/json') {
        const search = new URLSearchParams({
          query: screen.query,
          variables: JSON.stringify(screen.variables),
        });
        const first = await raw(`${url}?${search}`, { method: 'GET', headers: { ...headersFor('br') } });
        const etag = String(first.headers.etag ?? '');
        const again = await raw(`${url}?${search}`, {
          method: 'GET',
          headers: { ...headersFor('br'), 'if-none-match': etag },
        });
        revalidation = `${again.status}, ${again.bytes} B`;
      }
      const cpu: Record<CodingName, number[]> = { identity: [], gzip: [], br: [] };
      const rps: Record<CodingName, number[]> = { identity: [], gzip: [], br: [] };
      const options = (coding: CodingName): autocannon.Options => ({
        url,
        method: 'POST',
        headers: headersFor(coding),
        body,
      });
      await autocannon({ ...options('identity'), connections, duration: warmup });
      for (let round = 0; round < rounds; round++) {
        const order = [...CODINGS.slice(round % 3), ...CODINGS.slice(0, round % 3)];
        for (const coding of order) {
          const before = await kit.cpuMs(gateway.child.pid);
          const result = await autocannon({ ...options(coding), connections, duration });
          const after = await kit.cpuMs(gateway.child.pid);
          if (result.non2xx || result.errors)
            throw new Error(`${screen.name}, ${coding}: ${result.non2xx} non-2xx`);
          cpu[coding].push((((after ?? 0) - (before ?? 0)) * 1000) / result.requests.total);
          rps[coding].push(result.requests.average);
          console.log(JSON.stringify({ screen: screen.name, coding, round, rps: result.requests.average }));
        }
      }
      const cpuOf = (coding: CodingName) => Math.round(median(cpu[coding]));
      const rpsOf = (coding: CodingName) => Math.round(median(rps[coding]));
      rows.push(
        `| ${screen.name} | ${bytes.identity} | ${bytes.gzip} (×${ratio(bytes.gzip, bytes.identity)}) | ${bytes.br} (×${ratio(bytes.br, bytes.identity)}) | ${cpuOf('identity')} / ${cpuOf('gzip')} (×${ratio(cpuOf('gzip'), cpuOf('identity'))}) / ${cpuOf('br')} (×${ratio(cpuOf('br'), cpuOf('identity'))}) | ${rpsOf('identity')} / ${rpsOf('gzip')} (×${ratio(rpsOf('gzip'), rpsOf('identity'))}) / ${rpsOf('br')} (×${ratio(rpsOf('br'), rpsOf('identity'))}) | ${revalidation} |`,
      );
    }
  } finally {
    await kit.stop(gateway.child);
  }
  try {
    // Open SSE subscriptions, each on a fresh gateway: its resident memory before and after.
    const subscription = await operation('live-deposits');
    // Streams are gzip only (a brotli compressor held for hours costs about four times the memory).
    for (const coding of ['identity', 'gzip'] as const) {
      const fresh = await kit.startBenchGateway(sandbox.url, { SUBSCRIPTIONS_PER_KEY: String(STREAMS * 2) });
      kit.pinUnderTest(fresh.child.pid);
      const open: { destroy(): void }[] = [];
      try {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const before = await rssKiB(fresh.child.pid);
        for (let i = 0; i < STREAMS; i++) {
          await new Promise<void>((resolve, reject) => {
            const req = httpRequest(
              `${fresh.url}/graphql`,
              {
                method: 'POST',
                headers: {
                  authorization: KEY,
                  'content-type': 'application/json',
                  accept: 'text/event-stream',
                  ...(coding !== 'identity' && { 'accept-encoding': coding }),
                },
              },
              (res) => {
                if (res.statusCode !== 200) reject(new Error(`subscription: status ${res.statusCode}`));
                // The first bytes (a compressed flush, or the stream's opening comment) say it is open.
                res.once('data', () => resolve());
                open.push(res);
              },
            );
            req.on('error', reject);
            req.end(JSON.stringify({ query: subscription, variables: {} }));
          });
        }
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const after = await rssKiB(fresh.child.pid);
        memoryRows.push(`| ${coding} | ${STREAMS} | ${Math.round((after - before) / STREAMS)} |`);
      } finally {
        for (const res of open) res.destroy();
        await kit.stop(fresh.child);
      }
    }
  } finally {
    await kit.stop(sandbox.child);
  }
  const markdown = [
    `Delivery (${quick ? 'quick' : 'full'}: ${rounds} alternating rounds of ${duration} s per coding, medians; ${connections} connections; sharing off; ${kit.pinned ? 'gateway pinned to core 0, sandbox and load to core 1' : 'not pinned'}), ${new Date().toISOString()}`,
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}. Sandbox: the demo merchant, 20 wallets, 1000 deposits, 100 withdrawals.`,
    '',
    '| Screen | identity bytes | gzip bytes | br bytes | CPU µs/request identity / gzip / br | req/s identity / gzip / br | revalidating GET (If-None-Match) |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    'Open SSE subscriptions (live deposits), gateway resident memory per stream:',
    '',
    '| Coding | streams | KiB per stream |',
    '|---|---|---|',
    ...memoryRows,
  ].join('\n');
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  await writeFile(new URL('./results/delivery.md', import.meta.url), `${markdown}\n`);
  console.log(`\n${markdown}`);
}
