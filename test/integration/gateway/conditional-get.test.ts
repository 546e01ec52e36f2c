import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadManifest } from '../../../src/config/config.ts';
import { ActivityFeedDocument, WalletScreenDocument } from '../../generated/graphql.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';

// Conditional GETs: a weak ETag of the uncompressed body on 200 JSON answers to GET, and a 304
// without a body when If-None-Match matches it.

const MANIFEST_PATH = new URL('../../generated/persisted-documents.json', import.meta.url).pathname;
const manifest = loadManifest(MANIFEST_PATH);
const idOf = (name: string) => {
  for (const [hash, text] of manifest) if (text.includes(`query ${name}(`)) return hash;
  throw new Error(`no ${name} in the manifest`);
};

let gw: TestGateway;
let key: string;
let walletId: string;

beforeAll(async () => {
  gw = await startTestGateway({ config: { trustedDocuments: { mode: 'audit', manifest } } });
  const m = await gw.sandbox.world.merchant();
  key = m.key;
  walletId = (await gw.sandbox.world.wallet(m.id, { USDT: '50', TRX: '1' })).id;
  for (let i = 1; i <= 5; i++) await gw.sandbox.world.deposit(walletId, { amount: String(i) });
});
afterAll(() => gw.close());

function get(
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
  withKey: string | null = key,
) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    search.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return gw.gateway.fetch(`http://gateway.test/graphql?${search}`, {
    headers: {
      accept: 'application/graphql-response+json',
      ...(withKey && { authorization: `Bearer ${withKey}` }),
      ...headers,
    },
  });
}

const screen = () => get({ query: print(WalletScreenDocument), variables: { id: walletId } });
const varyOf = (response: Response) =>
  (response.headers.get('vary') ?? '').split(',').map((name) => name.trim().toLowerCase());

describe('GET answers', () => {
  it('carry a weak ETag of their body, the same for two identical GETs, private, no-cache, and Vary', async () => {
    const first = await screen();
    const second = await screen();
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^W\/"[\w-]{27}"$/);
    expect(second.headers.get('etag')).toBe(etag);
    expect(await first.text()).toBe(await second.text());
    expect(first.headers.get('cache-control')).toBe('private, no-cache');
    expect(varyOf(first)).toEqual(expect.arrayContaining(['authorization', 'accept', 'accept-encoding']));
  });

  it('answer 304 without a body when If-None-Match matches (weak comparison, lists, *), 200 otherwise', async () => {
    const etag = (await screen()).headers.get('etag') as string;
    const opaque = etag.replace(/^W\//, '');
    for (const ifNoneMatch of [etag, opaque, `W/"other", ${etag}`, '*']) {
      const response = await get(
        { query: print(WalletScreenDocument), variables: { id: walletId } },
        {
          'if-none-match': ifNoneMatch,
        },
      );
      expect({ ifNoneMatch, status: response.status }).toEqual({ ifNoneMatch, status: 304 });
      expect(await response.text()).toBe('');
      expect(response.headers.get('etag')).toBe(etag);
      expect(response.headers.get('cache-control')).toBe('private, no-cache');
      expect(varyOf(response)).toEqual(
        expect.arrayContaining(['authorization', 'accept', 'accept-encoding']),
      );
      expect(response.headers.get('content-encoding')).toBeNull();
    }
    const other = await get(
      { query: print(WalletScreenDocument), variables: { id: walletId } },
      {
        'if-none-match': 'W/"other"',
      },
    );
    expect(other.status).toBe(200);
    expect(JSON.parse(await other.text()).data.wallet.id).toBeTruthy();
  });

  it('change ETag when the data changes (a new deposit): the old tag gets the new body', async () => {
    const before = (await screen()).headers.get('etag') as string;
    await gw.sandbox.world.deposit(walletId, { amount: '77' });
    const after = await get(
      { query: print(WalletScreenDocument), variables: { id: walletId } },
      {
        'if-none-match': before,
      },
    );
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(before);
    expect(await after.text()).toContain('"77');
  });

  it('have the same ETag in brotli, gzip and identity (the tag of the uncompressed body)', async () => {
    const params = { query: print(ActivityFeedDocument), variables: { first: 50 } };
    const identity = await get(params);
    const br = await get(params, { 'accept-encoding': 'br' });
    const gzip = await get(params, { 'accept-encoding': 'gzip' });
    const text = await identity.text();
    expect(br.headers.get('content-encoding')).toBe('br');
    expect(gzip.headers.get('content-encoding')).toBe('gzip');
    expect(brotliDecompressSync(Buffer.from(await br.arrayBuffer())).toString('utf8')).toBe(text);
    expect(gunzipSync(Buffer.from(await gzip.arrayBuffer())).toString('utf8')).toBe(text);
    const etag = identity.headers.get('etag');
    expect(etag).toMatch(/^W\//);
    expect(br.headers.get('etag')).toBe(etag);
    expect(gzip.headers.get('etag')).toBe(etag);
    const revalidated = await get(params, { 'accept-encoding': 'br', 'if-none-match': etag as string });
    expect(revalidated.status).toBe(304);
  });

  it('of persisted documents (documentId, APQ hash) carry an ETag and answer 304 too', async () => {
    const hash = idOf('WalletScreen');
    const id = `sha256:${hash}`;
    const byId = await get({ documentId: id, variables: { id: walletId } });
    expect({ status: byId.status, body: byId.status === 200 ? '' : await byId.clone().text() }).toEqual({
      status: 200,
      body: '',
    });
    const etag = byId.headers.get('etag') as string;
    expect(etag).toMatch(/^W\//);
    const again = await get({ documentId: id, variables: { id: walletId } }, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    const apq = await get(
      { variables: { id: walletId }, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } },
      { 'if-none-match': etag },
    );
    expect(apq.status).toBe(304);
    expect(apq.headers.get('etag')).toBe(etag);
  });
});

describe('other answers', () => {
  it('POST answers carry no ETag and no Cache-Control (Vary: Accept-Encoding only)', async () => {
    const response = await gw.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${key}`,
        'accept-encoding': 'gzip',
      },
      body: JSON.stringify({ query: print(WalletScreenDocument), variables: { id: walletId } }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBeNull();
    expect(response.headers.get('cache-control')).toBeNull();
    expect(response.headers.get('vary')).toBe('Accept-Encoding');
  });

  it("an outsider's 401 carries no ETag, and no-store", async () => {
    const response = await get(
      { query: print(WalletScreenDocument), variables: { id: walletId } },
      { 'if-none-match': '*' },
      'not-a-key',
    );
    expect(response.status).toBe(401);
    expect(response.headers.get('etag')).toBeNull();
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(JSON.parse(await response.text()).errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('streams (multipart/mixed) carry no ETag, compressed or not', async () => {
    const response = await gw.gateway.fetch(
      `http://gateway.test/graphql?query=${encodeURIComponent('{ wallets(first: 1) { nodes { id } ... @defer { totalCount } } }')}`,
      { headers: { accept: 'multipart/mixed', authorization: `Bearer ${key}`, 'accept-encoding': 'gzip' } },
    );
    expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);
    expect(response.headers.get('content-encoding')).toBe('gzip');
    expect(response.headers.get('etag')).toBeNull();
    // The same URL answers JSON, a stream or a 406 by Accept, and each key its own data.
    expect(varyOf(response)).toEqual(expect.arrayContaining(['authorization', 'accept', 'accept-encoding']));
    expect(gunzipSync(Buffer.from(await response.arrayBuffer())).toString('utf8')).toContain(
      '"hasNext":false',
    );
  });
});
