import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, constants, gunzipSync } from 'node:zlib';
import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Compression, useCompression } from '../../../src/plugins/compression.ts';
import { createGatewayRuntime, type GatewayRuntime } from '../../../src/runtime.ts';
import { listen } from '../../../src/server.ts';
import { createLogger } from '../../../src/shared/logger.ts';
import type { Gateway } from '../../../src/yoga.ts';
import { ActivityFeedDocument, WalletScreenDeferredDocument } from '../../generated/graphql.ts';
import { DEFAULTS, startTestGateway, type TestGateway, testConfig } from '../../support/gateway.ts';

// Brotli/gzip answers: single ones above COMPRESSION_MIN_BYTES, and @defer streams over
// multipart/mixed and SSE, flushed part by part.

const FEED = print(ActivityFeedDocument);
const SCREEN = print(WalletScreenDeferredDocument);

let gw: TestGateway;
let key: string;
let walletId: string;

beforeAll(async () => {
  gw = await startTestGateway();
  const m = await gw.sandbox.world.merchant();
  key = m.key;
  walletId = (await gw.sandbox.world.wallet(m.id, { USDT: '50', TRX: '1' })).id;
  for (let i = 1; i <= 30; i++) await gw.sandbox.world.deposit(walletId, { amount: String(i) });
});
afterAll(() => gw.close());

function post(
  query: string,
  variables: Record<string, unknown>,
  headers: Record<string, string>,
  on: { fetch: TestGateway['gateway']['fetch'] } = gw.gateway,
  signal?: AbortSignal,
) {
  return on.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify({ query, variables }),
    ...(signal && { signal }),
  });
}

/** The body as sent, decoded by its Content-Encoding. */
async function decoded(response: Response): Promise<{ raw: number; text: string }> {
  const raw = Buffer.from(await response.arrayBuffer());
  const coding = response.headers.get('content-encoding');
  const text = (
    coding === 'br' ? brotliDecompressSync(raw) : coding === 'gzip' ? gunzipSync(raw) : raw
  ).toString('utf8');
  return { raw: raw.length, text };
}

/** What the bytes received so far decode to (a flushed stream decodes up to its last flush). */
/** What a gzip stream received so far decodes to (streams are gzip only). */
function decodePrefix(bytes: Buffer): string {
  return gunzipSync(bytes, { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8');
}

function varyOf(response: Response): string[] {
  return (response.headers.get('vary') ?? '').split(',').map((name) => name.trim().toLowerCase());
}

describe('single answers', () => {
  it('decode to the identity body, in the coding the client prefers, with Vary and Content-Length', async () => {
    const identity = await post(FEED, { first: 50 }, {});
    const plain = await identity.text();
    expect(plain.length).toBeGreaterThan(5_000);
    expect(identity.headers.get('content-encoding')).toBeNull();
    expect(varyOf(identity)).toContain('accept-encoding');
    const cases: [string, string | null][] = [
      ['gzip, deflate, br', 'br'],
      ['gzip, deflate, br, zstd', 'br'],
      ['gzip', 'gzip'],
      ['br;q=0.5, gzip', 'gzip'],
      ['br;q=0, GZIP;q=0.1', 'gzip'],
      ['*', 'br'],
      ['*;q=0.5, br;q=0', 'gzip'],
      ['gzip;q=0, br;q=0', null],
      ['identity', null],
      ['identity;q=0', null],
      ['deflate, zstd', null],
      ['', null],
    ];
    for (const [acceptEncoding, expected] of cases) {
      const response = await post(FEED, { first: 50 }, { 'accept-encoding': acceptEncoding });
      expect({ acceptEncoding, coding: response.headers.get('content-encoding') }).toEqual({
        acceptEncoding,
        coding: expected,
      });
      expect(varyOf(response)).toContain('accept-encoding');
      const length = response.headers.get('content-length');
      const { raw, text } = await decoded(response);
      expect(text).toBe(plain);
      if (length !== null) expect(Number(length)).toBe(raw);
      if (expected) expect(raw).toBeLessThan(plain.length / 3);
    }
  });

  it('below COMPRESSION_MIN_BYTES are sent as they are, still with Vary', async () => {
    const response = await post('{ __typename }', {}, { 'accept-encoding': 'br, gzip' });
    expect(response.headers.get('content-encoding')).toBeNull();
    expect(varyOf(response)).toContain('accept-encoding');
    expect(await response.text()).toBe('{"data":{"__typename":"Query"}}');
  });

  it("keeps another plugin's Vary (CORS's Origin) and adds Accept-Encoding", async () => {
    const response = await post(
      FEED,
      { first: 50 },
      { 'accept-encoding': 'br', origin: 'https://app.example' },
    );
    expect(response.headers.get('content-encoding')).toBe('br');
    expect(varyOf(response)).toEqual(expect.arrayContaining(['origin', 'accept-encoding']));
  });

  it('leave the GraphiQL page as it compresses itself (once), while the answers beside it are compressed', async () => {
    const page = await gw.gateway.fetch('http://gateway.test/graphql', {
      headers: { accept: 'text/html', 'accept-encoding': 'br' },
    });
    expect(page.headers.get('content-encoding')).toBe('br');
    const html = brotliDecompressSync(Buffer.from(await page.arrayBuffer())).toString('utf8');
    expect(html.trimStart()).toMatch(/^<!DOCTYPE html>/i);
    const answer = await post(FEED, { first: 50 }, { 'accept-encoding': 'br' });
    expect(answer.headers.get('content-encoding')).toBe('br');
  });

  it('is off with COMPRESSION=false', async () => {
    await using off = await createGatewayRuntime(testConfig({ compression: null }), {
      logger: createLogger('silent'),
      client: gw.client,
      processMetrics: false,
    });
    const response = await post(FEED, { first: 50 }, { 'accept-encoding': 'br' }, off.gateway);
    expect(response.headers.get('content-encoding')).toBeNull();
    expect(response.headers.get('vary')).toBeNull();
    const on = await post(FEED, { first: 50 }, { 'accept-encoding': 'br' });
    expect(on.headers.get('content-encoding')).toBe('br');
    expect(JSON.parse(await response.text()).data.deposits.edges).toHaveLength(30);
  });
});

describe('streams', () => {
  const depositsCall = () =>
    gw.sandbox.sandbox.requests.find((r) => r.path.startsWith('/external/v1/deposits'));

  // Streams are gzip only (a brotli compressor, held as long as the stream is open, costs about
  // four times gzip's memory); a client that accepts only brotli gets the stream as it is.
  for (const [accept, acceptEncoding, coding] of [
    ['text/event-stream', 'gzip', 'gzip'],
    ['multipart/mixed', 'gzip, deflate, br', 'gzip'],
  ] as const) {
    it(`@defer over ${accept}, ${acceptEncoding} → ${coding}: the first payload decodes while the deferred part's REST call is still unanswered`, async () => {
      // The deferred lists' REST call is answered only after 2 s: the first payload (the wallet and
      // its balances) must be readable, compressed, before that.
      await gw.sandbox.admin('POST', '/faults', {
        method: 'GET',
        path: '/external/v1/deposits',
        latencyMs: 2_000,
        times: 1,
      });
      gw.resetCalls();
      const response = await post(SCREEN, { id: walletId }, { accept, 'accept-encoding': acceptEncoding });
      expect(response.headers.get('content-encoding')).toBe(coding);
      expect(response.headers.get('content-length')).toBeNull();
      expect(response.headers.get('content-type')?.startsWith(accept)).toBe(true);
      expect(varyOf(response)).toContain('accept-encoding');
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const received: Buffer[] = [];
      let text = '';
      while (!text.includes('"hasNext":true')) {
        const { done, value } = await reader.read();
        expect(done).toBe(false);
        received.push(Buffer.from(value as Uint8Array));
        text = decodePrefix(Buffer.concat(received));
      }
      expect(text).toContain('"currencyCode":"USDT"');
      expect(text).not.toContain('"deposits"');
      // Read while the deferred part's call has not been answered (status 0: no answer yet).
      expect(depositsCall()?.status).toBe(0);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        received.push(Buffer.from(value));
      }
      const whole = gunzipSync(Buffer.concat(received)).toString('utf8');
      expect(whole).toContain('"label":"activity"');
      expect(whole).toContain('"hasNext":false');
    });
  }
});

describe("a stream's compressor", () => {
  let compression: Compression;
  let runtime: GatewayRuntime;
  let gateway: Gateway;
  beforeAll(async () => {
    compression = useCompression({ minBytes: 1_024, maxStreams: 1 });
    runtime = await createGatewayRuntime(DEFAULTS, {
      logger: createLogger('silent'),
      client: gw.client,
      processMetrics: false,
      compression,
    });
    gateway = runtime.gateway;
  });
  afterAll(async () => {
    await runtime[Symbol.asyncDispose]();
  });
  const settled = async () => {
    for (let i = 0; i < 100 && compression.tally.openStreams > 0; i++) await new Promise(setImmediate);
  };

  it('is freed when the stream ends', async () => {
    const response = await post(
      SCREEN,
      { id: walletId },
      { accept: 'multipart/mixed', 'accept-encoding': 'gzip' },
      gateway,
    );
    expect(compression.tally.openStreams).toBe(1);
    const text = gunzipSync(Buffer.from(await response.arrayBuffer())).toString('utf8');
    expect(text).toContain('"hasNext":false');
    await settled();
    expect(compression.tally.openStreams).toBe(0);
  });

  it('is not made for a stream past maxStreams, nor for a client that accepts only brotli: those streams go as they are', async () => {
    await gw.sandbox.admin('POST', '/faults', {
      method: 'GET',
      path: '/external/v1/deposits',
      latencyMs: 2_000,
      times: 1,
    });
    const held = await post(
      SCREEN,
      { id: walletId },
      { accept: 'multipart/mixed', 'accept-encoding': 'gzip' },
      gateway,
    );
    expect(held.headers.get('content-encoding')).toBe('gzip');
    expect(compression.tally.openStreams).toBe(1);
    const second = await post(
      SCREEN,
      { id: walletId },
      { accept: 'multipart/mixed', 'accept-encoding': 'gzip' },
      gateway,
    );
    expect(second.headers.get('content-encoding')).toBeNull();
    expect(compression.tally.openStreams).toBe(1);
    expect(await second.text()).toContain('"hasNext":false');
    expect(gunzipSync(Buffer.from(await held.arrayBuffer())).toString('utf8')).toContain('"hasNext":false');
    await settled();
    expect(compression.tally.openStreams).toBe(0);
    const brotliOnly = await post(
      SCREEN,
      { id: walletId },
      { accept: 'multipart/mixed', 'accept-encoding': 'br' },
      gateway,
    );
    expect(brotliOnly.headers.get('content-encoding')).toBeNull();
    expect(brotliOnly.headers.get('vary')?.toLowerCase()).toContain('accept-encoding');
    expect(await brotliOnly.text()).toContain('"hasNext":false');
  });

  for (const how of ['cancel', 'abort'] as const) {
    it(`is freed when the client goes away mid-stream (${how})`, async () => {
      await gw.sandbox.admin('POST', '/faults', {
        method: 'GET',
        path: '/external/v1/deposits',
        latencyMs: 2_000,
        times: 1,
      });
      const controller = new AbortController();
      const response = await post(
        SCREEN,
        { id: walletId },
        { accept: 'text/event-stream', 'accept-encoding': 'gzip' },
        gateway,
        controller.signal,
      );
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const first = await reader.read();
      expect(first.done).toBe(false);
      expect(compression.tally.openStreams).toBe(1);
      if (how === 'cancel') await reader.cancel();
      else controller.abort();
      await settled();
      expect(compression.tally.openStreams).toBe(0);
    });
  }
  it('is freed when a client on a socket disconnects mid-stream', async () => {
    await gw.sandbox.admin('POST', '/faults', {
      method: 'GET',
      path: '/external/v1/deposits',
      latencyMs: 2_000,
      times: 1,
    });
    const running = await listen(gateway, {
      port: 0,
      host: '127.0.0.1',
      logger: createLogger('silent'),
      maxRequestBytes: DEFAULTS.maxRequestBytes,
      edge: DEFAULTS.edge,
      scopes: gw.runtime.scopes,
    });
    try {
      const response = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
        const req = httpRequest(`${running.url}/graphql`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${key}`,
            accept: 'text/event-stream',
            'accept-encoding': 'gzip',
          },
        });
        req.on('response', resolve);
        req.on('error', reject);
        req.end(JSON.stringify({ query: SCREEN, variables: { id: walletId } }));
      });
      expect(response.headers['content-encoding']).toBe('gzip');
      await new Promise((resolve) => response.once('data', resolve));
      expect(compression.tally.openStreams).toBe(1);
      response.destroy();
      for (let i = 0; i < 200 && compression.tally.openStreams > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(compression.tally.openStreams).toBe(0);
    } finally {
      await running.close(1_000);
    }
  });
});
