import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { createSchema, createYoga, type GraphiQLOptions } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { TAB_BAR_STYLE, useGraphiQLDelivery } from '../../../src/plugins/graphiql-delivery.ts';

const schema = createSchema({
  typeDefs: 'type Query { balance: String }',
  resolvers: { Query: { balance: () => '1' } },
});

/**
 * A stand-in for Yoga's renderer (whose module holds 30 MB of assets): a page with a head, and a
 * script that mentions `</head>` later, as GraphiQL's inline scripts do.
 */
function gateway() {
  const rendered: GraphiQLOptions[] = [];
  const render = async (options: GraphiQLOptions) => {
    rendered.push(options);
    return `<html><head><title>${options.title}</title></head><body><script>"</head>"</script>${'graphiql '.repeat(2_000)}</body></html>`;
  };
  // As yoga.ts wires it (Yoga's own GraphiQL off).
  const yoga = createYoga({
    schema,
    logging: false,
    graphiql: false,
    landingPage: false,
    plugins: [
      useGraphiQLDelivery({
        endpoint: '/graphql',
        graphiql: {
          title: 'Merchant Wallet GraphQL',
          defaultQuery: '{ balance }',
          shouldPersistHeaders: false,
        },
        render,
      }),
    ],
  });
  const visit = (headers: Record<string, string> = {}, path = '/graphql', method = 'GET') =>
    yoga.fetch(`http://yoga${path}`, { method, headers: { accept: 'text/html,*/*;q=0.8', ...headers } });
  return { rendered, visit };
}

const bytesOf = async (response: Response) => Buffer.from(await response.arrayBuffer());

describe('useGraphiQLDelivery', () => {
  it('sends `GET /` to the endpoint', async () => {
    const { visit } = gateway();
    for (const method of ['GET', 'HEAD']) {
      const response = await visit({}, '/', method);
      expect([response.status, response.headers.get('location')]).toEqual([302, '/graphql']);
    }
  });

  it("serves the page to a browser with the tab bar's style in its own head, an ETag and a private lifetime", async () => {
    const { visit } = gateway();
    const response = await visit();
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html.startsWith(`<html><head><title>Merchant Wallet GraphQL</title>${TAB_BAR_STYLE}</head>`)).toBe(
      true,
    );
    expect(html.split(TAB_BAR_STYLE)).toHaveLength(2);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    expect(response.headers.get('cache-control')).toBe('private, max-age=300');
    expect(response.headers.get('vary')).toBe('accept-encoding');
    expect(response.headers.get('content-encoding')).toBeNull();
    expect((await visit({}, '/graphql/')).status).toBe(200);
  });

  it('builds the page once, on the first visit, for every visit after and all at once', async () => {
    const { rendered, visit } = gateway();
    expect(rendered).toHaveLength(0);
    const pages = await Promise.all([visit(), visit(), visit()]);
    await visit();
    expect(rendered).toEqual([
      { title: 'Merchant Wallet GraphQL', defaultQuery: '{ balance }', shouldPersistHeaders: false },
    ]);
    const tags = new Set(pages.map((page) => page.headers.get('etag')));
    expect(tags.size).toBe(1);
  });

  it('answers a reload with its ETag by a 304 without a body', async () => {
    const { visit } = gateway();
    const tag = (await visit()).headers.get('etag') as string;
    const reload = await visit({ 'if-none-match': tag });
    expect(reload.status).toBe(304);
    expect(await reload.text()).toBe('');
    expect(reload.headers.get('etag')).toBe(tag);
    expect((await visit({ 'if-none-match': '"another"' })).status).toBe(200);
  });

  it('sends the page brotli or gzip compressed, as the browser accepts, with the same ETag', async () => {
    const { visit } = gateway();
    const plain = await visit();
    const html = await plain.text();
    const brotli = await visit({ 'accept-encoding': 'gzip, deflate, br' });
    expect(brotli.headers.get('content-encoding')).toBe('br');
    expect(brotli.headers.get('etag')).toBe(plain.headers.get('etag'));
    expect(brotliDecompressSync(await bytesOf(brotli)).toString()).toBe(html);
    const gzip = await visit({ 'accept-encoding': 'gzip' });
    expect(gzip.headers.get('content-encoding')).toBe('gzip');
    expect(gunzipSync(await bytesOf(gzip)).toString()).toBe(html);
  });

  it('leaves GraphQL requests to the endpoint alone: no HTML in Accept, a POST, a HEAD', async () => {
    const { rendered, visit } = gateway();
    const query = await visit({ accept: 'application/json' }, '/graphql?query=%7Bbalance%7D');
    expect(await query.json()).toEqual({ data: { balance: '1' } });
    const posted = await visit({ 'content-type': 'application/json' }, '/graphql', 'POST');
    expect(posted.headers.get('content-type')).not.toMatch(/html/);
    const head = await visit({}, '/graphql', 'HEAD');
    expect(head.headers.get('content-type')).not.toMatch(/html/);
    expect(rendered).toHaveLength(0);
  });
});
