import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { negotiateCoding, useCompression } from '../../../src/plugins/compression.ts';
import { useConditionalGet } from '../../../src/plugins/conditional-get.ts';

const BIG = 'wallet '.repeat(500);

const schema = createSchema({
  typeDefs: /* GraphQL */ `
    type Query { big: String small: String wallets: [String] }
    type Subscription { ticks: String }
  `,
  resolvers: {
    Query: { big: () => BIG, small: () => 'ok', wallets: () => [BIG, BIG] },
    Subscription: {
      ticks: {
        subscribe: async function* () {
          yield { ticks: BIG };
          yield { ticks: 'last' };
        },
      },
    },
  },
});

/** Answers that are not GraphQL results: the metrics text, HTML, a body already encoded. */
const otherAnswers: Plugin = {
  onRequest({ url, endResponse }) {
    const answer = (type: string, headers: Record<string, string> = {}) =>
      endResponse(new Response(BIG, { headers: { 'content-type': type, ...headers } }));
    if (url.pathname === '/metrics') answer('text/plain; version=0.0.4');
    else if (url.pathname === '/page') answer('text/html; charset=utf-8');
    else if (url.pathname === '/encoded') answer('application/json', { 'content-encoding': 'gzip' });
  },
};

/** As yoga.ts puts it: after useConditionalGet, first of the rest (COMPRESSION_MIN_BYTES' default). */
function gateway(maxStreams = 10) {
  const compression = useCompression({ minBytes: 1024, maxStreams });
  const yoga = createYoga({
    schema,
    logging: false,
    plugins: [useConditionalGet('/graphql'), compression, otherAnswers, useDeferStream()],
  });
  return { yoga, tally: compression.tally };
}

const { yoga, tally } = gateway();

function post(query: string, headers: Record<string, string>, app = yoga) {
  return app.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
}

const bytesOf = async (response: Response) => Buffer.from(await response.arrayBuffer());

/** What the same request answers without compression. */
async function identityText(query: string, headers: Record<string, string> = {}) {
  return (await post(query, headers)).text();
}

/** Event-loop turns until `done` holds: a compressor frees itself on its 'close' event, a turn or two after it ends. */
async function turnsUntil(done: () => boolean) {
  for (let turn = 0; turn < 100 && !done(); turn++) await new Promise((resolve) => setImmediate(resolve));
}

describe('useCompression', () => {
  it('compresses a single answer in brotli at equal weight, with its compressed length and Vary', async () => {
    const response = await post('{ big }', { 'accept-encoding': 'gzip, br' });
    expect(response.headers.get('content-encoding')).toBe('br');
    expect(response.headers.get('vary')).toBe('Accept-Encoding');
    const body = await bytesOf(response);
    expect(Number(response.headers.get('content-length'))).toBe(body.byteLength);
    expect(body.byteLength).toBeLessThan(BIG.length / 10);
    expect(brotliDecompressSync(body).toString()).toBe(await identityText('{ big }'));
  });

  it('chooses gzip when the header prefers it, x-gzip included', async () => {
    for (const header of ['gzip', 'x-gzip', 'br;q=0.5, gzip', 'br;q=0, *']) {
      const response = await post('{ big }', { 'accept-encoding': header });
      expect(response.headers.get('content-encoding'), header).toBe('gzip');
      expect(gunzipSync(await bytesOf(response)).toString()).toBe(await identityText('{ big }'));
    }
  });

  it('sends the answer as it is, with Vary, without Accept-Encoding or when nothing offered is acceptable', async () => {
    // identity;q=0 and *;q=0 refuse even identity: the answer still goes, uncompressed, not a 406.
    for (const header of [undefined, '', 'deflate', 'identity;q=0', '*;q=0', 'gzip;q=0.5, identity']) {
      const response = await post('{ big }', header === undefined ? {} : { 'accept-encoding': header });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-encoding'), header).toBeNull();
      expect(response.headers.get('vary')).toBe('Accept-Encoding');
      expect(await response.text()).toBe(await identityText('{ big }'));
    }
  });

  it('sends an answer below minBytes as it is', async () => {
    const response = await post('{ small }', { 'accept-encoding': 'br, gzip' });
    expect(response.headers.get('content-encoding')).toBeNull();
    expect(response.headers.get('vary')).toBe('Accept-Encoding');
    expect(await response.json()).toEqual({ data: { small: 'ok' } });
  });

  it('compresses the metrics text; never HTML, an answer already encoded, or a 304', async () => {
    const get = (path: string, headers: Record<string, string> = {}) =>
      yoga.fetch(`http://yoga${path}`, { headers: { 'accept-encoding': 'br', ...headers } });
    const metrics = await get('/metrics');
    expect(metrics.headers.get('content-encoding')).toBe('br');
    expect(brotliDecompressSync(await bytesOf(metrics)).toString()).toBe(BIG);
    const page = await get('/page');
    expect([page.headers.get('content-encoding'), page.headers.get('vary')]).toEqual([null, null]);
    expect(await page.text()).toBe(BIG);
    const encoded = await get('/encoded');
    expect(encoded.headers.get('content-encoding')).toBe('gzip');
    expect(await encoded.text()).toBe(BIG);
    const tag = (await get('/graphql?query=%7Bbig%7D', { accept: 'application/json' })).headers.get('etag');
    const notModified = await get('/graphql?query=%7Bbig%7D', {
      accept: 'application/json',
      'if-none-match': tag as string,
    });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get('content-encoding')).toBeNull();
  });

  it('compresses a multipart stream in gzip only, with no length, and frees its compressor at the end', async () => {
    const query = '{ ... @defer { wallets } }';
    const accept = { accept: 'multipart/mixed' };
    const response = await post(query, { ...accept, 'accept-encoding': 'gzip' });
    expect(response.headers.get('content-encoding')).toBe('gzip');
    expect(response.headers.get('content-length')).toBeNull();
    expect(response.headers.get('vary')).toBe('Accept-Encoding');
    expect(tally.openStreams).toBe(1);
    expect(gunzipSync(await bytesOf(response)).toString()).toBe(await identityText(query, accept));
    await turnsUntil(() => tally.openStreams === 0);
    expect(tally.openStreams).toBe(0);
    // A client that accepts only brotli gets the stream as it is.
    const brotliOnly = await post(query, { ...accept, 'accept-encoding': 'br' });
    expect(brotliOnly.headers.get('content-encoding')).toBeNull();
    expect(await brotliOnly.text()).toBe(await identityText(query, accept));
  });

  it("replaces SSE's Content-Encoding: none by gzip", async () => {
    const query = 'subscription { ticks }';
    const accept = { accept: 'text/event-stream' };
    const plain = await post(query, accept);
    expect(plain.headers.get('content-encoding')).toBe('none');
    const response = await post(query, { ...accept, 'accept-encoding': 'gzip' });
    expect(response.headers.get('content-encoding')).toBe('gzip');
    expect(gunzipSync(await bytesOf(response)).toString()).toBe(await plain.text());
  });

  it('sends a stream as it is past maxStreams, and frees a compressor whose client cancels', async () => {
    const one = gateway(1);
    const headers = { accept: 'text/event-stream', 'accept-encoding': 'gzip' };
    const first = await post('subscription { ticks }', headers, one.yoga);
    expect(first.headers.get('content-encoding')).toBe('gzip');
    expect(one.tally.openStreams).toBe(1);
    const second = await post('subscription { ticks }', headers, one.yoga);
    expect(second.headers.get('content-encoding')).toBe('none');
    await second.text();
    await first.body?.cancel();
    await turnsUntil(() => one.tally.openStreams === 0);
    expect(one.tally.openStreams).toBe(0);
  });
});

describe('negotiateCoding', () => {
  it('takes the highest weight, brotli first at equal weight, identity only when named higher', () => {
    expect(negotiateCoding('gzip;q=1, br;q=1')).toBe('br');
    expect(negotiateCoding('GZIP;q=0.9, br;q=0.8')).toBe('gzip');
    expect(negotiateCoding('br;q=1.5, gzip')).toBe('gzip'); // a malformed weight drops its entry
    expect(negotiateCoding('identity;q=1, gzip;q=0.5')).toBe('identity');
    expect(negotiateCoding('*;q=0.1, gzip;q=0')).toBe('br');
    expect(negotiateCoding('br', ['gzip'])).toBe('identity');
  });
});
