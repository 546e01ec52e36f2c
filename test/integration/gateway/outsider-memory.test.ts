import { createHash } from 'node:crypto';
import { addTypenameToDocument } from '@apollo/client/utilities';
import { type DocumentNode, print } from 'graphql';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DashboardScreenDocument } from '../../../examples/apollo/generated/graphql.ts';
import { type Config, loadManifest } from '../../../src/config/config.ts';
import * as documentHashes from '../../../src/execution/document-hashes.ts';
import { createDocumentCache, type DocumentCache } from '../../../src/plugins/document-cache.ts';
import {
  createPersistedQueryRegistry,
  type PersistedQueryRegistry,
} from '../../../src/plugins/trusted-documents.ts';
import { createGatewayRuntime } from '../../../src/runtime.ts';
import type { Gateway } from '../../../src/yoga.ts';
import { DashboardDocument, WalletScreenDocument } from '../../generated/graphql.ts';
import { DEFAULTS, startTestGateway, type TestGateway, testConfig } from '../../support/gateway.ts';
import { heapUsed } from '../../support/heap.ts';
import { recordSuiteKey } from '../../support/suite-logs.ts';

// codegenRegistration, counted: the wrong-hash attack must not reach it without an accepted key.
vi.mock('../../../src/execution/document-hashes.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../src/execution/document-hashes.ts')>();
  return { ...actual, codegenRegistration: vi.fn(actual.codegenRegistration) };
});
const codegenRegistration = vi.mocked(documentHashes.codegenRegistration);

const MB = 1024 * 1024;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const codegenHash = (document: DocumentNode) =>
  ((document as { __meta__?: { hash?: string } }).__meta__?.hash ?? '').replace(/^sha256:/, '');
const apolloPrint = (document: DocumentNode) => print(addTypenameToDocument(document));
const apq = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

/**
 * The attacker's document: ~84 KB, 2,880 tokens (under QUERY_MAX_TOKENS) and as many comments
 * (which the limit does not count), unique per `n`. It parses; it does not validate.
 */
const attackDocument = (n: number) => {
  const fields = Array.from({ length: 2_880 }, (_, i) => `f${i} # ${'x'.repeat(20)}\n`).join('');
  return `query Attack${n} {\n${fields}}`;
};
/** A valid document of about `kb` KB (padded with comments), unique per `n`. */
const validDocument = (n: number, kb: number) =>
  `query Padded${n} { wallets(first: 1) { totalCount } }\n${'# padding\n'.repeat(kb * 100)}`;

let t: TestGateway;
let key: string;
let other: string;
let documentCache: DocumentCache;
let registry: PersistedQueryRegistry;
let gateway: Gateway;
/** Each test's runtimes, disposed of after it. */
let runtimes = new AsyncDisposableStack();

/**
 * A gateway on `t`'s client (what the REST API said of keys is its), holding this test's document
 * cache and APQ registry, whose bytes the tests read.
 */
async function gatewayWith(config: Config): Promise<Gateway> {
  const runtime = await createGatewayRuntime(config, {
    logger: pino({ level: 'silent' }),
    client: t.client,
    processMetrics: false,
    documentCache,
    persistedQueries: registry,
  });
  runtimes.use(runtime);
  return runtime.gateway;
}

async function send(body: Record<string, unknown>, authorization: string | null) {
  const response = await gateway.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      ...(authorization && { authorization }),
    },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    body: (await response.json()) as {
      data?: { wallets?: Record<string, unknown> } | null;
      errors?: { message: string; extensions: { code: string } }[];
    },
  };
}

beforeAll(async () => {
  t = await startTestGateway();
  const app = await t.sandbox.world.merchant();
  await t.sandbox.world.wallet(app.id);
  const attacker = await t.sandbox.world.merchant();
  key = `Bearer ${app.key}`;
  other = `Bearer ${attacker.key}`;
  recordSuiteKey(app.key);
  recordSuiteKey(attacker.key);
});
afterAll(async () => {
  await t.close();
});
afterEach(async () => {
  await runtimes.disposeAsync();
  runtimes = new AsyncDisposableStack();
});
beforeEach(async () => {
  documentCache = createDocumentCache(4 * MB);
  registry = createPersistedQueryRegistry(256 * 1024);
  gateway = await gatewayWith(DEFAULTS);
  codegenRegistration.mockClear();
  // Both keys are real: the REST API answered each with a 2xx.
  for (const authorization of [key, other]) {
    const answer = await send({ query: '{ wallets(first: 1) { totalCount } }' }, authorization);
    expect(answer.status).toBe(200);
  }
});

describe('the parse and validation cache', () => {
  it('keeps nothing of unique ~84 KB documents sent without a key', async () => {
    const kept = { size: documentCache.size, bytes: documentCache.bytes };
    const before = heapUsed();
    for (let n = 0; n < 60; n++) {
      const text = attackDocument(n);
      expect(text.length).toBeGreaterThan(80_000);
      const answer = await send({ query: text }, null);
      expect(answer.status).toBe(400);
    }
    // What the keys' own requests kept before, and nothing more.
    expect({ size: documentCache.size, bytes: documentCache.bytes }).toEqual(kept);
    expect(documentCache.get(attackDocument(0))).toBeUndefined();
    // Yoga's cache kept ~1.7 MB of each (over 100 MB here); now the process keeps none of it.
    expect(heapUsed() - before).toBeLessThan(20 * MB);
  });

  it('keeps the documents of an accepted key, within its bound in bytes', async () => {
    const texts = Array.from({ length: 12 }, (_, n) => validDocument(n, 20));
    for (const text of texts) {
      const answer = await send({ query: text }, key);
      expect(answer.body.errors).toBeUndefined();
      expect(documentCache.bytes).toBeLessThanOrEqual(documentCache.maxBytes);
    }
    expect(documentCache.size).toBeGreaterThan(0);
    expect(documentCache.size).toBeLessThan(texts.length);
    // The most recent stays; the oldest went first.
    expect(documentCache.get(texts.at(-1) ?? '')).toBeDefined();
    expect(documentCache.get(texts[0] ?? '')).toBeUndefined();
    // A kept document is served, as the same object, to anyone sending the same text.
    const kept = documentCache.get(texts.at(-1) ?? '');
    await send({ query: texts.at(-1) }, null);
    expect(documentCache.get(texts.at(-1) ?? '')).toBe(kept);
  });

  it('keeps a document of the manifest whoever sends it', async () => {
    const manifest = loadManifest(
      new URL('../../generated/persisted-documents.json', import.meta.url).pathname,
    );
    const [id, text] = [...manifest].find(([, t]) => t.includes('query Dashboard(')) ?? ['', ''];
    gateway = await gatewayWith(testConfig({ trustedDocuments: { mode: 'audit', manifest } }));
    const answer = await send({ documentId: `sha256:${id}` }, null);
    expect(answer.status).toBe(401);
    expect(documentCache.get(text)).toBeDefined();
  });

  it('keeps neither a made-up key’s documents nor a document that does not validate', async () => {
    const before = documentCache.bytes;
    await send({ query: validDocument(100, 1) }, 'Bearer made-up-key');
    await send({ query: '{ wallets(first: 1) { nope } }' }, key);
    expect(documentCache.get(validDocument(100, 1))).toBeUndefined();
    expect(documentCache.get('{ wallets(first: 1) { nope } }')).toBeUndefined();
    expect(documentCache.bytes).toBe(before);
  });
});

describe('the APQ registry', () => {
  const text = 'query Registered { wallets(first: 3) { totalCount } }';

  it('keeps no registration sent without a key, or with a key the REST API did not accept', async () => {
    for (const authorization of [null, 'Bearer made-up-key']) {
      await send({ query: text, extensions: apq(sha256(text)) }, authorization);
      const byHash = await send({ extensions: apq(sha256(text)) }, authorization);
      expect(byHash.body.errors?.map((e) => e.extensions.code)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    }
    expect(registry.size).toBe(0);
  });

  it('registers for an accepted key, per key, within its bound in bytes', async () => {
    const registered = await send({ query: text, extensions: apq(sha256(text)) }, key);
    expect(registered.body).toEqual({ data: { wallets: { totalCount: 1 } } });
    expect((await send({ extensions: apq(sha256(text)) }, key)).body).toEqual(registered.body);
    // Another key's hash-only request does not find it.
    const elsewhere = await send({ extensions: apq(sha256(text)) }, other);
    expect(elsewhere.body.errors?.map((e) => e.extensions.code)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    for (let n = 0; n < 20; n++) {
      const big = validDocument(n, 20);
      const answer = await send({ query: big, extensions: apq(sha256(big)) }, key);
      expect(answer.body.errors).toBeUndefined();
      expect(registry.bytes).toBeLessThanOrEqual(registry.maxBytes);
    }
    expect(registry.size).toBeGreaterThan(1);
    expect(registry.size).toBeLessThan(21);
  });

  it("an outsider's or another key's registration of the app's hash does not change what the app's key runs", async () => {
    // The app registers its document under codegen's hash with Apollo's print (__typenames added).
    const hash = codegenHash(DashboardDocument);
    const app = await send({ query: apolloPrint(DashboardDocument), extensions: apq(hash) }, key);
    expect(app.body.data?.wallets).toMatchObject({ __typename: 'WalletConnection' });
    // Codegen's print of it (what a manifest holds) is a text whose own sha256 is that hash.
    const plain = documentHashes.printAsCodegen(DashboardDocument);
    expect(sha256(plain)).toBe(hash);
    for (const authorization of [null, 'Bearer made-up-key', other]) {
      await send({ query: plain, extensions: apq(hash) }, authorization);
    }
    const byHash = await send({ extensions: apq(hash) }, key);
    expect(byHash.body.errors).toBeUndefined();
    expect(byHash.body.data?.wallets).toMatchObject({
      __typename: 'WalletConnection',
      totalCount: 1,
      nodes: [expect.objectContaining({ __typename: 'Wallet' })],
    });
  });

  it('a new key’s first registration is kept once its own request made the REST API accept it', async () => {
    const fresh = await t.sandbox.world.merchant();
    recordSuiteKey(fresh.key);
    const authorization = `Bearer ${fresh.key}`;
    const first = await send({ extensions: apq(sha256(text)) }, authorization);
    expect(first.body.errors?.map((e) => e.extensions.code)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    await send({ query: text, extensions: apq(sha256(text)) }, authorization);
    const byHash = await send({ extensions: apq(sha256(text)) }, authorization);
    expect(byHash.body).toEqual({ data: { wallets: { totalCount: 0 } } });
  });

  it("checks a hash that is not the text's sha256 (a parse, two prints) for an accepted key only, within QUERY_MAX_TOKENS", async () => {
    const wrong = {
      query: apolloPrint(WalletScreenDocument),
      extensions: apq(codegenHash(DashboardScreenDocument)),
    };
    const keyless = await send(wrong, null);
    expect(keyless.status).toBe(401);
    expect(codegenRegistration).not.toHaveBeenCalled();
    const accepted = await send(wrong, key);
    expect(accepted.status).toBe(400);
    expect(accepted.body.errors?.map((e) => e.extensions.code)).toEqual(['BAD_REQUEST']);
    expect(codegenRegistration).toHaveBeenCalledTimes(1);
    expect(codegenRegistration.mock.calls[0]?.[2]).toBe(DEFAULTS.queryLimits.maxTokens);
  });
});
