import { parse } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { TrustedDocumentsMode } from '../../../src/config/config.ts';
import { authorizationOf } from '../../../src/context.ts';
import { codegenRegistration, printAsCodegen, sha256 } from '../../../src/execution/document-hashes.ts';
import type { GatewayMetrics } from '../../../src/observability/metrics.ts';
import {
  createPersistedQueryRegistry,
  operationNamesOf,
  type PersistedQueryRegistry,
  useTrustedDocuments,
} from '../../../src/plugins/trusted-documents.ts';

const KEY = 'Bearer mw_test_trusted_one';
const OTHER_KEY = 'Bearer mw_test_trusted_two';
const GREETING = 'query Greeting { greeting }';
const FAREWELL = 'query Farewell { farewell }';
const MANIFEST = new Map([[sha256(GREETING), GREETING]]);
const MAX_TOKENS = 1_000;

/** A caller's scope as the test's stand-in for the HMAC of caller-scope.ts. */
const scopeOf = (authorization: string) => `scope of ${authorization.slice(-3)}`;

function gateway(mode: TrustedDocumentsMode, manifest: ReadonlyMap<string, string> = MANIFEST) {
  const executed: string[] = [];
  const counted: string[] = [];
  const warnings: Record<string, unknown>[] = [];
  /** The keys the REST API accepted lately (MerchantWalletClient.authorizationKnownGood). */
  const knownGood = new Set<string>([KEY]);
  const registry = createPersistedQueryRegistry();
  const logger = pino({ level: 'info' }, { write: (line: string) => warnings.push(JSON.parse(line)) });
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: 'type Query { greeting: String! farewell: String! }',
      resolvers: {
        Query: {
          greeting: () => {
            executed.push('greeting');
            return 'hi';
          },
          farewell: (_root, _args, { request }: { request: Request }) => {
            executed.push('farewell');
            // Its REST calls prove the key while the request runs.
            const authorization = authorizationOf(request);
            if (authorization?.endsWith('proven')) knownGood.add(authorization);
            return 'bye';
          },
        },
      },
    }),
    logging: false,
    // As yoga.ts: the GraphQL over HTTP persisted-documents parameter.
    extraParamNames: ['documentId'],
    plugins: useTrustedDocuments({
      mode,
      manifest,
      logger,
      metrics: { trustedDocument: (result: string) => counted.push(result) } as unknown as GatewayMetrics,
      callerScope: (request) => {
        const authorization = authorizationOf(request);
        return authorization === null ? null : scopeOf(authorization);
      },
      keyKnownGood: (request) => knownGood.has(authorizationOf(request) ?? ''),
      maxTokens: MAX_TOKENS,
      registry,
    }),
  });
  const post = async (body: Record<string, unknown>, authorization: string | null = KEY) => {
    const response = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
        ...(authorization && { authorization }),
      },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };
  const get = async (search: string) => {
    const response = await yoga.fetch(`http://yoga/graphql?${search}`, {
      headers: { accept: 'application/graphql-response+json', authorization: KEY },
    });
    return { status: response.status, body: await response.json() };
  };
  return { post, get, executed, counted, warnings, registry, knownGood };
}

const apq = (hash: string, query?: string) => ({
  ...(query !== undefined && { query }),
  extensions: { persistedQuery: { version: 1, sha256Hash: hash } },
});

const required = (detail: string) => ({
  status: 400,
  body: {
    errors: [
      {
        message: `This gateway runs trusted documents only: send the documentId of an operation of the app's persisted-documents manifest. ${detail}`,
        extensions: { code: 'PERSISTED_DOCUMENT_REQUIRED' },
      },
    ],
  },
});

const NOT_FOUND = {
  status: 400,
  body: {
    errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }],
  },
};

const MISMATCH = {
  status: 400,
  body: {
    errors: [
      {
        message:
          "The persisted-query hash does not match the query it came with: it is neither the query's sha256 nor codegen's hash of that document.",
        extensions: { code: 'BAD_REQUEST' },
      },
    ],
  },
};

const GREETED = { status: 200, body: { data: { greeting: 'hi' } } };

describe('useTrustedDocuments, enforce', () => {
  it("runs a manifest document named by documentId, as sha256:<hex>, bare hex, by GET, or by APQ's hash", async () => {
    const g = gateway('enforce');
    const hash = sha256(GREETING);
    expect(await g.post({ documentId: `sha256:${hash}` })).toEqual(GREETED);
    expect(await g.post({ documentId: hash })).toEqual(GREETED);
    expect(await g.get(`documentId=sha256:${hash}`)).toEqual(GREETED);
    expect(await g.post(apq(hash))).toEqual(GREETED);
    expect(g.counted).toEqual(['trusted', 'trusted', 'trusted', 'trusted']);
  });

  it("runs the manifest's text for a manifest id sent with another text, and a query that is exactly a manifest document", async () => {
    const g = gateway('enforce');
    expect(await g.post({ documentId: sha256(GREETING), query: FAREWELL })).toEqual(GREETED);
    expect(await g.post({ query: GREETING })).toEqual(GREETED);
    expect(g.executed).toEqual(['greeting', 'greeting']);
  });

  it('refuses anything else with 400 PERSISTED_DOCUMENT_REQUIRED before parsing', async () => {
    const g = gateway('enforce');
    const sent = 'query Greeting { greeting }\n';
    expect(await g.post({ query: sent })).toEqual(
      required('A document sent as `query` is refused unless it is one of them.'),
    );
    expect(await g.post({ query: '{ this does not parse' })).toEqual(
      required('A document sent as `query` is refused unless it is one of them.'),
    );
    expect(await g.post({ documentId: sha256(FAREWELL) })).toEqual(
      required('This documentId is not in the manifest.'),
    );
    expect(await g.post({})).toEqual(required('The request has neither a query nor a documentId.'));
    // An APQ registration registers nothing.
    expect(await g.post(apq(sha256(FAREWELL), FAREWELL))).toEqual(
      required('A document sent as `query` is refused unless it is one of them.'),
    );
    expect(await g.post(apq(sha256(FAREWELL)))).toEqual(required('This documentId is not in the manifest.'));
    expect(g.executed).toEqual([]);
    expect(g.registry.size).toBe(0);
    expect(g.counted).toEqual(['refused', 'refused', 'not_found', 'refused', 'not_found']);
  });
});

describe('useTrustedDocuments, off', () => {
  it('runs any document, counting nothing without a manifest', async () => {
    const g = gateway('off', new Map());
    expect(await g.post({ query: '{ greeting }' })).toEqual(GREETED);
    expect(g.counted).toEqual([]);
  });

  it('runs documents outside a manifest, counted as untrusted, unlogged', async () => {
    const g = gateway('off');
    expect(await g.post({ query: '{ greeting }' })).toEqual(GREETED);
    expect(await g.post({ documentId: sha256(GREETING) })).toEqual(GREETED);
    expect(g.counted).toEqual(['untrusted', 'trusted']);
    expect(g.warnings).toEqual([]);
  });

  it('answers an unknown hash with PersistedQueryNotFound, on which APQ clients resend the query', async () => {
    const g = gateway('off');
    expect(await g.post(apq(sha256(FAREWELL)))).toEqual(NOT_FOUND);
    expect(g.counted).toEqual(['not_found']);
  });

  it("keeps a known-good key's registration under its hash, for that key only", async () => {
    const g = gateway('off');
    const hash = sha256(FAREWELL);
    expect(await g.post(apq(hash, FAREWELL))).toEqual({ status: 200, body: { data: { farewell: 'bye' } } });
    expect(g.registry.get(scopeOf(KEY), hash)).toBe(FAREWELL);
    expect(await g.post(apq(hash))).toEqual({ status: 200, body: { data: { farewell: 'bye' } } });
    expect(await g.post({ documentId: `sha256:${hash}` })).toEqual({
      status: 200,
      body: { data: { farewell: 'bye' } },
    });
    // Another key (and an outsider) finds only what it registered itself.
    expect(await g.post(apq(hash), OTHER_KEY)).toEqual(NOT_FOUND);
    expect(await g.post(apq(hash), null)).toEqual(NOT_FOUND);
    expect(g.counted).toEqual(['untrusted', 'registered', 'registered', 'not_found', 'not_found']);
  });

  it("refuses a known-good key's registration under a hash that is neither the text's nor codegen's", async () => {
    const g = gateway('off');
    expect(await g.post(apq(sha256('another text'), FAREWELL))).toEqual(MISMATCH);
    expect(await g.post(apq('not-a-hash', FAREWELL))).toEqual(MISMATCH);
    expect(g.executed).toEqual([]);
    expect(g.registry.size).toBe(0);
  });

  it("keeps the document codegen hashed, not the sent text, under codegen's hash", async () => {
    const g = gateway('off');
    // Apollo's own print of the app's document, which codegen hashed after normalising it.
    const sent = 'query Farewell {\n  farewell\n}';
    const hash = sha256(printAsCodegen(parse(sent)));
    expect(hash).not.toBe(sha256(sent));
    expect(await g.post(apq(hash, sent))).toEqual({ status: 200, body: { data: { farewell: 'bye' } } });
    const kept = g.registry.get(scopeOf(KEY), hash);
    expect(kept).toBe(codegenRegistration(sent, hash, MAX_TOKENS));
    expect(await g.post(apq(hash))).toEqual({ status: 200, body: { data: { farewell: 'bye' } } });
  });

  it('runs a registration from a key not accepted yet as the plain query, kept only if the key is accepted by its answer', async () => {
    const g = gateway('off');
    const hash = sha256(FAREWELL);
    const stranger = 'Bearer mw_test_trusted_new';
    expect(await g.post(apq(hash, FAREWELL), stranger)).toEqual({
      status: 200,
      body: { data: { farewell: 'bye' } },
    });
    expect(g.registry.size).toBe(0);
    // Its hash is not checked: a wrong one costs what the plain query costs, and is not kept.
    expect(await g.post(apq(sha256('another text'), FAREWELL), stranger)).toEqual({
      status: 200,
      body: { data: { farewell: 'bye' } },
    });
    expect(g.registry.size).toBe(0);
    // A key whose own REST calls prove it during the request.
    const proven = 'Bearer mw_test_trusted_proven';
    expect(await g.post(apq(hash, FAREWELL), proven)).toEqual({
      status: 200,
      body: { data: { farewell: 'bye' } },
    });
    expect(g.registry.get(scopeOf(proven), hash)).toBe(FAREWELL);
    // Without a key, never.
    expect(await g.post(apq(hash, FAREWELL), null)).toEqual({
      status: 200,
      body: { data: { farewell: 'bye' } },
    });
    expect(g.registry.size).toBe(1);
  });
});

describe('useTrustedDocuments, audit', () => {
  it('runs every document, and logs and counts each one outside the manifest with its hash', async () => {
    const g = gateway('audit');
    expect(await g.post({ query: FAREWELL, operationName: 'Farewell' })).toEqual({
      status: 200,
      body: { data: { farewell: 'bye' } },
    });
    expect(await g.post({ query: GREETING })).toEqual(GREETED);
    expect(g.counted).toEqual(['untrusted', 'trusted']);
    expect(g.warnings).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'document outside the persisted-documents manifest',
        operationName: 'Farewell',
        documentHash: sha256(FAREWELL),
      }),
    ]);
    // Never the document itself, nor the key.
    expect(JSON.stringify(g.warnings)).not.toContain('farewell }');
    expect(JSON.stringify(g.warnings)).not.toContain('mw_test');
  });
});

describe('createPersistedQueryRegistry', () => {
  it("keeps a key's first text under a hash", () => {
    const registry = createPersistedQueryRegistry();
    registry.register('s', 'h', 'first');
    registry.register('s', 'h', 'second');
    registry.register('t', 'h', 'other');
    expect([registry.get('s', 'h'), registry.get('t', 'h'), registry.get('u', 'h')]).toEqual([
      'first',
      'other',
      undefined,
    ]);
  });

  it('counts two bytes a character of key and text plus 200 an entry, and drops the least recently used past its bound', () => {
    const entry = (registry: PersistedQueryRegistry, scope: string) =>
      registry.register(scope, 'h', 'x'.repeat(48));
    // Key "a\nh" (3) and text (48): 2 × 51 + 200.
    const registry = createPersistedQueryRegistry(302 * 2);
    entry(registry, 'a');
    expect(registry.bytes).toBe(302);
    entry(registry, 'b');
    registry.get('a', 'h');
    entry(registry, 'c');
    expect([registry.get('a', 'h'), registry.get('b', 'h'), registry.get('c', 'h')].map(Boolean)).toEqual([
      true,
      false,
      true,
    ]);
    expect(registry.size).toBe(2);
  });

  it('keeps nothing at 0 bytes', () => {
    const registry = createPersistedQueryRegistry(0);
    registry.register('s', 'h', 'text');
    expect(registry.size).toBe(0);
    expect(registry.maxBytes).toBe(0);
  });
});

describe('operationNamesOf', () => {
  it("names the manifest's operations; a text that does not parse names none", () => {
    const manifest = new Map([
      ['a', GREETING],
      ['b', `${FAREWELL} query { greeting } fragment F on Query { greeting }`],
      ['c', '{ not a document'],
    ]);
    expect(operationNamesOf(manifest)).toEqual(new Set(['Greeting', 'Farewell']));
  });
});
