import { createHash } from 'node:crypto';
import { addTypenameToDocument } from '@apollo/client/utilities';
import { type DocumentNode, print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ActivityScreenDocument,
  DashboardScreenDocument,
  WithdrawScreenDocument,
} from '../../../examples/apollo/generated/graphql.ts';
import { loadManifest, parseConfig } from '../../../src/config/config.ts';
import { DashboardDocument, WalletScreenDocument } from '../../generated/graphql.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { parseMetrics, sampleSum } from '../../support/metrics.ts';

// The manifest `npm run codegen` writes from schema/operations (the client preset's persistedDocuments).
const MANIFEST_PATH = new URL('../../generated/persisted-documents.json', import.meta.url).pathname;
const manifest = loadManifest(MANIFEST_PATH);
const idOf = (name: string) => {
  for (const [hash, text] of manifest) if (text.includes(`query ${name}(`)) return hash;
  throw new Error(`no ${name} in the manifest`);
};
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
// The hash codegen wrote into a typed document (sha256 of its normalised print, not of any text sent).
const codegenHash = (document: DocumentNode) =>
  ((document as { __meta__?: { hash?: string } }).__meta__?.hash ?? '').replace(/^sha256:/, '');
// What Apollo Client 4 sends with it: its own print, after adding `__typename` to every selection set.
const apolloPrint = (document: DocumentNode) => print(addTypenameToDocument(document));

let enforce: TestGateway;
let audit: TestGateway;
let off: TestGateway;
let key: string;

beforeAll(async () => {
  enforce = await startTestGateway({ config: { trustedDocuments: { mode: 'enforce', manifest } } });
  audit = await startTestGateway({ config: { trustedDocuments: { mode: 'audit', manifest } } });
  off = await startTestGateway({ config: { trustedDocuments: { mode: 'off', manifest: new Map() } } });
  for (const gw of [enforce, audit, off]) {
    const m = await gw.sandbox.world.merchant();
    await gw.sandbox.world.wallet(m.id);
    // The same key on the three sandboxes' merchants is not possible: each test picks its own.
    (gw as TestGateway & { key?: string }).key = m.key;
  }
  key = (enforce as TestGateway & { key?: string }).key ?? '';
});
afterAll(async () => {
  for (const gw of [enforce, audit, off]) await gw.close();
});

const keyOf = (gw: TestGateway) => (gw as TestGateway & { key?: string }).key ?? '';

async function send(gw: TestGateway, body: Record<string, unknown>) {
  const response = await gw.gateway.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      authorization: `Bearer ${keyOf(gw)}`,
    },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    body: (await response.json()) as {
      data?: Record<string, unknown> | null;
      errors?: { message: string; extensions: { code: string } }[];
    },
  };
}

describe('PERSISTED_DOCUMENTS_MODE=enforce', () => {
  it('runs a document of the manifest by documentId, and by its APQ hash', async () => {
    const byId = await send(enforce, { documentId: `sha256:${idOf('Dashboard')}` });
    expect(byId.status).toBe(200);
    expect(byId.body.errors).toBeUndefined();
    expect(byId.body.data?.wallets).toMatchObject({ totalCount: 1 });
    const byHash = await send(enforce, {
      extensions: { persistedQuery: { version: 1, sha256Hash: idOf('Dashboard') } },
    });
    expect(byHash.body).toEqual(byId.body);
  });

  it('refuses any other document with 400 PERSISTED_DOCUMENT_REQUIRED, before parsing or calling upstream', async () => {
    enforce.resetCalls();
    for (const body of [
      { query: '{ wallets(first: 1) { totalCount } }' },
      { query: '{ wallets(' },
      { documentId: `sha256:${'0'.repeat(64)}` },
      {},
      {
        query: '{ __typename }',
        extensions: { persistedQuery: { version: 1, sha256Hash: sha256('{ __typename }') } },
      },
      {
        // Another app's document under its codegen hash, as Apollo registers it: not in the manifest.
        query: apolloPrint(DashboardScreenDocument),
        extensions: { persistedQuery: { version: 1, sha256Hash: codegenHash(DashboardScreenDocument) } },
      },
    ]) {
      const answer = await send(enforce, body);
      expect(answer.status).toBe(400);
      expect(answer.body.errors?.map((e) => e.extensions.code)).toEqual(['PERSISTED_DOCUMENT_REQUIRED']);
    }
    expect(enforce.upstreamCalls()).toEqual([]);
  });

  it('accepts the text of a manifest document sent as query', async () => {
    const text = manifest.get(idOf('Dashboard')) ?? '';
    const answer = await send(enforce, { query: text });
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
  });

  it("runs the manifest's document for a manifest hash sent with some other text (Apollo's WebSocket link)", async () => {
    const answer = await send(enforce, {
      query: '{ withdrawalIntents(first: 1000) { nodes { id restId amount } } }',
      extensions: { persistedQuery: { version: 1, sha256Hash: idOf('Dashboard').replace(/^sha256:/, '') } },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
    // The Dashboard's fields, not the text's.
    expect(Object.keys(answer.body.data ?? {})).toEqual(['wallets']);
  });

  it('keeps limits, the cost check and deduplication for persisted documents', async () => {
    const costly =
      'query Costly { deposits(first: 1000) { nodes { wallet { deposits(first: 1000) { nodes { id } } } } } }';
    const own = await startTestGateway({
      config: { trustedDocuments: { mode: 'enforce', manifest: new Map([[sha256(costly), costly]]) } },
    });
    try {
      const m = await own.sandbox.world.merchant();
      (own as TestGateway & { key?: string }).key = m.key;
      const refused = await send(own, { documentId: `sha256:${sha256(costly)}` });
      expect(refused.body.errors?.map((e) => e.extensions.code)).toEqual(['QUERY_LIMIT_EXCEEDED']);
      expect(own.upstreamCalls()).toEqual([]);
    } finally {
      await own.close();
    }
    // The first held far longer than a busy machine takes to send the other three.
    await enforce.sandbox.admin('POST', '/faults', {
      method: 'GET',
      path: '/external/v1/wallets',
      latencyMs: 1_000,
      times: 1,
    });
    const before = sampleSum(
      parseMetrics((await enforce.metrics.scrape()).body),
      'gateway_graphql_deduplicated_total',
    );
    await Promise.all([1, 2, 3, 4].map(() => send(enforce, { documentId: `sha256:${idOf('Dashboard')}` })));
    const after = sampleSum(
      parseMetrics((await enforce.metrics.scrape()).body),
      'gateway_graphql_deduplicated_total',
    );
    expect(after - before).toBe(3);
  });
});

describe('PERSISTED_DOCUMENTS_MODE=audit', () => {
  it('runs documents outside the manifest, and logs and counts each', async () => {
    const answer = await send(audit, {
      query: 'query Adhoc { wallets(first: 1) { totalCount } }',
      operationName: 'Adhoc',
    });
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual({ wallets: { totalCount: 1 } });
    const warned = audit.logs
      .map((l) => JSON.parse(l) as { msg: string; operationName?: string; documentHash?: string })
      .filter((l) => l.msg === 'document outside the persisted-documents manifest');
    expect(warned).toEqual([
      expect.objectContaining({
        operationName: 'Adhoc',
        documentHash: sha256('query Adhoc { wallets(first: 1) { totalCount } }'),
      }),
    ]);
    await send(audit, { documentId: idOf('Dashboard') });
    const samples = parseMetrics((await audit.metrics.scrape()).body);
    expect(sampleSum(samples, 'gateway_trusted_documents_total', { result: 'untrusted' })).toBe(1);
    expect(sampleSum(samples, 'gateway_trusted_documents_total', { result: 'trusted' })).toBe(1);
  });
});

describe('automatic persisted queries (APQ), where arbitrary documents may run', () => {
  const text = 'query Apq { wallets(first: 2) { totalCount } }';
  const apq = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

  it('asks for the query once, registers it, then runs it by hash', async () => {
    const first = await send(off, { extensions: apq(sha256(text)) });
    expect(first.status).toBe(400);
    expect(first.body.errors).toEqual([
      expect.objectContaining({
        message: 'PersistedQueryNotFound',
        extensions: expect.objectContaining({ code: 'PERSISTED_QUERY_NOT_FOUND' }),
      }),
    ]);
    const registering = await send(off, { query: text, extensions: apq(sha256(text)) });
    expect(registering.body).toEqual({ data: { wallets: { totalCount: 1 } } });
    const byHash = await send(off, { extensions: apq(sha256(text)) });
    expect(byHash.body).toEqual(registering.body);
  });

  it("registers a document under codegen's hash, sent with Apollo Client's own print of it, and runs that print by hash", async () => {
    // Apollo's PersistedQueryLink with generateHash reading codegen's `__meta__.hash`, no manifest.
    const hash = codegenHash(WalletScreenDocument);
    const sent = apolloPrint(WalletScreenDocument);
    expect(sha256(sent)).not.toBe(hash);
    const walletId = (
      (await send(off, { query: '{ wallets(first: 1) { nodes { id } } }' })).body.data as {
        wallets: { nodes: { id: string }[] };
      }
    ).wallets.nodes[0]?.id;
    const variables = { id: walletId };
    const first = await send(off, { variables, extensions: apq(`sha256:${hash}`) });
    expect(first.body.errors?.map((e) => e.extensions.code)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    const registering = await send(off, { query: sent, variables, extensions: apq(`sha256:${hash}`) });
    expect(registering.status).toBe(200);
    expect(registering.body.errors).toBeUndefined();
    // Apollo's own text ran: the `__typename` its cache needs is there.
    expect(registering.body.data?.wallet).toMatchObject({ __typename: 'Wallet', restId: expect.any(String) });
    const byHash = await send(off, { variables, extensions: apq(`sha256:${hash}`) });
    expect(byHash.body).toEqual(registering.body);
  });

  it("registers a document under codegen's hash sent with any print of it (an app whose codegen adds the __typenames)", async () => {
    const hash = codegenHash(DashboardScreenDocument);
    for (const sent of [print(DashboardScreenDocument), apolloPrint(DashboardScreenDocument)]) {
      const answer = await send(off, { query: sent, extensions: apq(hash) });
      expect(answer.status).toBe(200);
      expect(answer.body.data?.wallets).toMatchObject({ __typename: 'WalletConnection', totalCount: 1 });
    }
    expect((await send(off, { extensions: apq(hash) })).body.data?.wallets).toMatchObject({ totalCount: 1 });
  });

  it("cannot be poisoned: another merchant's text registered first under an app's hash changes nothing that app gets", async () => {
    // The attacker knows the app's codegen hash (it ships in the app) and registers, before the
    // app does, texts that print to the same document, with a key the REST API accepts.
    const attacker = await off.sandbox.world.merchant();
    const hash = codegenHash(DashboardDocument);
    await off.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${attacker.key}` },
      body: JSON.stringify({ query: '{ wallets(first: 1) { totalCount } }' }),
    });
    const variants = [
      print(DashboardDocument).replace(/\{\n/, '{\n  injected @client\n'),
      print(DashboardDocument),
    ];
    for (const query of variants) {
      const response = await off.gateway.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${attacker.key}` },
        body: JSON.stringify({ query, extensions: apq(hash) }),
      });
      expect(response.status).toBe(200);
      // The attacker's own request ran the document the hash names, not its text.
      const body = (await response.json()) as { data?: { wallets?: Record<string, unknown> } };
      expect(body.data?.wallets).toMatchObject({ __typename: 'WalletConnection', totalCount: 0 });
    }
    // The app (Apollo, no manifest) asks by hash alone: its key registered nothing under it yet,
    // another key's registration is not its own. It registers, and gets the __typenames its cache needs.
    const first = await send(off, { extensions: apq(hash) });
    expect(first.body.errors?.map((e) => e.extensions.code)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    await send(off, { query: apolloPrint(DashboardDocument), extensions: apq(hash) });
    const byHash = await send(off, { extensions: apq(hash) });
    expect(byHash.status).toBe(200);
    expect(byHash.body.errors).toBeUndefined();
    expect(byHash.body.data?.wallets).toMatchObject({
      __typename: 'WalletConnection',
      totalCount: 1,
      nodes: [expect.objectContaining({ __typename: 'Wallet' })],
    });
  });

  it('refuses a hash that is not the query’s, in either style', async () => {
    for (const [query, hash] of [
      [text, sha256('something else')],
      // codegen's hash of one document with another document's text
      [apolloPrint(ActivityScreenDocument), codegenHash(DashboardScreenDocument)],
      [print(DashboardDocument), codegenHash(WithdrawScreenDocument)],
    ] as const) {
      const answer = await send(off, { query, extensions: apq(hash) });
      expect(answer.status).toBe(400);
      expect(answer.body.errors).toEqual([
        expect.objectContaining({
          message: expect.stringMatching(/^The persisted-query hash does not match the query it came with/),
          extensions: expect.objectContaining({ code: 'BAD_REQUEST' }),
        }),
      ]);
    }
  });
});

describe('configuration', () => {
  it('reads PERSISTED_DOCUMENTS and PERSISTED_DOCUMENTS_MODE', () => {
    expect(parseConfig({}).trustedDocuments).toEqual({
      manifestPath: undefined,
      manifest: new Map(),
      mode: 'off',
    });
    const read = parseConfig({ PERSISTED_DOCUMENTS: MANIFEST_PATH }).trustedDocuments;
    expect(read.mode).toBe('off');
    expect(read.manifest).toEqual(manifest);
    expect(
      parseConfig({
        PERSISTED_DOCUMENTS: MANIFEST_PATH,
        NODE_ENV: 'production',
        UPSTREAM_URL: 'https://api.test',
      }).trustedDocuments.mode,
    ).toBe('enforce');
    expect(() => parseConfig({ PERSISTED_DOCUMENTS_MODE: 'enforce' })).toThrow(/needs PERSISTED_DOCUMENTS/);
    expect(() => parseConfig({ PERSISTED_DOCUMENTS_MODE: 'strict' })).toThrow(/off, audit or enforce/);
  });

  it('refuses a manifest whose document does not hash to its id', async () => {
    const { writeFileSync, mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const path = `${mkdtempSync(`${tmpdir()}/manifest-`)}/m.json`;
    writeFileSync(path, JSON.stringify({ [`sha256:${'a'.repeat(64)}`]: '{ __typename }' }));
    expect(() => loadManifest(path)).toThrow(/does not hash to its id/);
    // As configuration: one more problem listed, and the gateway does not start.
    expect(() => parseConfig({ PERSISTED_DOCUMENTS: path })).toThrow(
      /PERSISTED_DOCUMENTS: .*does not hash to its id/,
    );
    expect(key).not.toBe('');
  });
});
