import { hash } from 'node:crypto';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useCompression } from '../../../src/plugins/compression.ts';
import { matches, useConditionalGet } from '../../../src/plugins/conditional-get.ts';

let executions = 0;

const schema = createSchema({
  typeDefs: 'type Query { balance: String wallets: [String] }',
  resolvers: {
    Query: {
      balance: () => {
        executions++;
        return 'x'.repeat(2_000);
      },
      wallets: () => ['a', 'b'],
    },
  },
});

/** First in the plugin list, then compression, as yoga.ts puts them. */
function gateway(plugins: Plugin[] = []) {
  return createYoga({
    schema,
    logging: false,
    plugins: [useConditionalGet('/graphql'), ...plugins, useDeferStream()],
  });
}

const yoga = gateway();
const QUERY = '/graphql?query=%7Bbalance%7D';

function get(path: string, headers: Record<string, string> = {}, app = yoga) {
  return app.fetch(`http://yoga${path}`, { headers: { accept: 'application/json', ...headers } });
}

const weakTagOf = (text: string) => `W/"${hash('sha1', text, 'base64url')}"`;

describe('useConditionalGet', () => {
  it('tags a 200 JSON answer to a GET with a weak ETag of its body, private no-cache and Vary', async () => {
    const response = await get(QUERY);
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(JSON.parse(text)).toEqual({ data: { balance: 'x'.repeat(2_000) } });
    expect(response.headers.get('etag')).toBe(weakTagOf(text));
    expect(response.headers.get('cache-control')).toBe('private, no-cache');
    expect(response.headers.get('vary')).toBe('Authorization, Accept, Accept-Encoding');
  });

  it('answers a matching If-None-Match with a 304 without a body, after executing the query', async () => {
    const tag = (await get(QUERY)).headers.get('etag') as string;
    executions = 0;
    const response = await get(QUERY, { 'if-none-match': tag });
    expect(response.status).toBe(304);
    expect(await response.text()).toBe('');
    expect(Object.fromEntries(response.headers)).toEqual({
      etag: tag,
      'cache-control': 'private, no-cache',
      vary: 'Authorization, Accept, Accept-Encoding',
    });
    // A 304 saves the bytes, not the work.
    expect(executions).toBe(1);
  });

  it('compares weakly: with or without W/, in a list, or *; a mismatch gets the 200 and its tag', async () => {
    const tag = (await get(QUERY)).headers.get('etag') as string;
    const opaque = tag.replace(/^W\//, '');
    for (const ifNoneMatch of [opaque, `"other", ${tag}`, `W/"other",${opaque}`, '*']) {
      expect((await get(QUERY, { 'if-none-match': ifNoneMatch })).status).toBe(304);
    }
    const mismatch = await get(QUERY, { 'if-none-match': 'W/"other"' });
    expect(mismatch.status).toBe(200);
    expect(mismatch.headers.get('etag')).toBe(tag);
    expect(JSON.parse(await mismatch.text())).toEqual({ data: { balance: 'x'.repeat(2_000) } });
    expect(matches(null, tag)).toBe(false);
    expect(matches('', tag)).toBe(false);
  });

  it('gives a GET that is not a 200 Cache-Control no-store and no ETag', async () => {
    const response = await get('/graphql?query=%7Bbalance', { accept: 'application/graphql-response+json' });
    expect(response.status).toBe(400);
    expect(response.headers.get('etag')).toBeNull();
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('vary')).toBe('Authorization, Accept');
  });

  it('leaves POST answers as they are', async () => {
    const response = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'if-none-match': '*' },
      body: JSON.stringify({ query: '{ balance }' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBeNull();
    expect(response.headers.get('cache-control')).toBeNull();
    expect(response.headers.get('vary')).toBeNull();
  });

  it('gives a stream no ETag, only Vary: Authorization, Accept', async () => {
    const response = await get('/graphql?query=%7B...%20%40defer%20%7Bwallets%7D%7D', {
      accept: 'multipart/mixed',
      'if-none-match': '*',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);
    expect(response.headers.get('etag')).toBeNull();
    expect(response.headers.get('cache-control')).toBeNull();
    expect(response.headers.get('vary')).toBe('Authorization, Accept');
    await response.text();
  });

  it('tags the uncompressed body: the same ETag and 304 whatever the Content-Encoding', async () => {
    const compressing = gateway([useCompression({ minBytes: 1024, maxStreams: 10 })]);
    const identity = await get(QUERY, {}, compressing);
    const tag = identity.headers.get('etag');
    expect(tag).toBe(weakTagOf(await identity.text()));
    const brotli = await get(QUERY, { 'accept-encoding': 'br' }, compressing);
    expect(brotli.headers.get('content-encoding')).toBe('br');
    expect(brotli.headers.get('etag')).toBe(tag);
    const revalidated = await get(
      QUERY,
      { 'accept-encoding': 'br', 'if-none-match': tag as string },
      compressing,
    );
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get('content-encoding')).toBeNull();
  });
});
