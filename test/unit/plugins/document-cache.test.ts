import fc from 'fast-check';
import { type DocumentNode, parse, specifiedRules, type ValidationRule, validate } from 'graphql';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { createDocumentCache, retainedBytes, useDocumentCache } from '../../../src/plugins/document-cache.ts';
import { schema } from '../../../src/schema/index.ts';
import { requestTemplates } from '../../support/generated-documents.ts';
import { heapUsed } from '../../support/heap.ts';

// Documents that hold the most heap per character or per token, and an app's screen.
const SHAPES: Record<string, (n: number) => string> = {
  'one short field per token': (n) =>
    `query Q${n} { wallets(first: 1) { nodes { ${'id '.repeat(2_990)} } } }`,
  'comments, which the token limit does not count': (n) =>
    `query Q${n} { wallets(first: 1) { totalCount } }\n${'#\n'.repeat(40_000)}`,
  'unknown fields': (n) => `query Q${n} { ${Array.from({ length: 2_900 }, (_, i) => `f${i}`).join(' ')} }`,
  'a long string': (n) => `query Q${n} { wallet(id: "${'x'.repeat(80_000)}") { id } }`,
  // graphql-js builds an escaped string value with `+=`: a rope node or more per escape.
  '`\\n` escapes': (n) => `query Q${n} { wallet(id: "${'\\n'.repeat(40_000)}") { id } }`,
  '`\\u0041` escapes': (n) => `query Q${n} { wallet(id: "${'\\u0041'.repeat(13_333)}") { id } }`,
  '`\\u0100` escapes': (n) => `query Q${n} { wallet(id: "${'\\u0100'.repeat(13_333)}") { id } }`,
  'characters between escapes': (n) => `query Q${n} { wallet(id: "${'xx\\n'.repeat(26_666)}") { id } }`,
  'a screen': (n) =>
    `query Screen${n}($after: String) { wallets(first: 20, after: $after) { totalCount nodes { id restId status } pageInfo { hasNextPage endCursor } } }`,
};

describe('retainedBytes', () => {
  for (const [shape, make] of Object.entries(SHAPES)) {
    it(`is an upper bound of the heap a parsed, validated document holds: ${shape}`, () => {
      const count = shape === 'a screen' ? 500 : 40;
      const kept: unknown[] = [];
      let estimated = 0;
      const before = heapUsed();
      for (let n = 0; n < count; n++) {
        const text = make(n);
        const document = parse(text);
        // What validation leaves attached to a document (its errors are never kept).
        validate(schema, document, specifiedRules);
        estimated += retainedBytes(text, document);
        kept.push(text, document);
      }
      const measured = heapUsed() - before;
      expect(kept).toHaveLength(2 * count);
      expect(measured).toBeGreaterThan(0);
      expect(estimated).toBeGreaterThanOrEqual(measured);
    });
  }
});

describe('retainedBytes on documents generated from the schema', () => {
  // Documents an app could send, drawn from the schema (seeded): the bound holds beyond the shapes above.
  const seed = Number(process.env.DOCUMENT_CACHE_SEED ?? 38);
  it(`is an upper bound of the heap 300 generated documents hold (seed ${seed})`, () => {
    const texts = fc.sample(requestTemplates(schema), { numRuns: 300, seed }).map((t) => t.query);
    const kept: unknown[] = [];
    let estimated = 0;
    const before = heapUsed();
    for (const text of texts) {
      const document = parse(text);
      validate(schema, document, specifiedRules);
      estimated += retainedBytes(text, document);
      kept.push(text, document);
    }
    const measured = heapUsed() - before;
    expect(kept).toHaveLength(600);
    expect(measured).toBeGreaterThan(0);
    expect(estimated).toBeGreaterThanOrEqual(measured);
  });
});

describe('createDocumentCache', () => {
  it('keeps documents up to its bound in estimated bytes, least recently used out first', () => {
    const cache = createDocumentCache(1_000_000);
    const texts = Array.from({ length: 10 }, (_, n) => SHAPES['one short field per token']?.(n) ?? '');
    for (const text of texts) {
      cache.keep(text, parse(text));
      expect(cache.bytes).toBeLessThanOrEqual(cache.maxBytes);
    }
    // Each is ~1.8 MB estimated: larger than the whole bound, none is kept.
    expect(cache.size).toBe(0);
    const small = createDocumentCache(200_000);
    for (let n = 0; n < 50; n++)
      small.keep(SHAPES['a screen']?.(n) ?? '', parse(SHAPES['a screen']?.(n) ?? ''));
    expect(small.bytes).toBeLessThanOrEqual(200_000);
    expect(small.get(SHAPES['a screen']?.(49) ?? '')).toBeDefined();
    expect(small.get(SHAPES['a screen']?.(0) ?? '')).toBeUndefined();
  });

  it('keeps nothing at a bound of 0 (DOCUMENT_CACHE_MAX_BYTES=0)', () => {
    const none = createDocumentCache(0);
    const text = SHAPES['a screen']?.(0) ?? '';
    none.keep(text, parse(text));
    expect([none.size, none.bytes, none.get(text)]).toEqual([0, 0, undefined]);
  });
});

describe('useDocumentCache through yoga.fetch', () => {
  /** Resolves every `held` under way: keeps requests under way while another arrives. */
  let waiting: (() => void)[] = [];
  const release = () => {
    for (const resolve of waiting) resolve();
    waiting = [];
  };
  const tiny = createSchema({
    typeDefs: 'type Query { balance: String held: String }',
    resolvers: {
      Query: {
        balance: () => '10.00',
        held: () =>
          new Promise<string>((resolve) => {
            waiting.push(() => resolve('released'));
          }),
      },
    },
  });

  /** A gateway as yoga.ts wires it (Yoga's own cache off), recording each request's document. */
  function gateway(options: { maxBytes?: number; mayKeep: (request: Request, text: string) => boolean }) {
    const cache = createDocumentCache(options.maxBytes);
    const documents: DocumentNode[] = [];
    /** Runs of a validation rule a plugin before the cache adds, as the query limits do. */
    let validations = 0;
    const counting: ValidationRule = () => {
      validations++;
      return {};
    };
    const addsRule: Plugin = {
      onValidate: ({ addValidationRule }) => addValidationRule(counting),
    };
    const recorder: Plugin = { onExecute: ({ args }) => void documents.push(args.document) };
    const validated = new WeakMap<DocumentNode, string>();
    const yoga = createYoga({
      schema: tiny,
      logging: false,
      parserAndValidationCache: false,
      plugins: [addsRule, useDocumentCache({ cache, mayKeep: options.mayKeep, validated }), recorder],
    });
    const post = async (query: string) => {
      const response = await yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query }),
      });
      return { status: response.status, body: await response.json() };
    };
    return { cache, documents, validated, post, validations: () => validations };
  }

  it('keeps a validated document when mayKeep says so, and hands every request the same object after', async () => {
    const asked: string[] = [];
    const g = gateway({
      mayKeep: (_request, text) => {
        asked.push(text);
        return true;
      },
    });
    expect(await g.post('{ balance }')).toEqual({ status: 200, body: { data: { balance: '10.00' } } });
    expect(asked).toEqual(['{ balance }']);
    expect(g.cache.size).toBe(1);
    expect(await g.post('{ balance }')).toEqual({ status: 200, body: { data: { balance: '10.00' } } });
    expect(g.documents).toHaveLength(2);
    expect(g.documents[1]).toBe(g.documents[0]);
    expect(g.cache.get('{ balance }')).toBe(g.documents[0]);
    // Validated once: the second request's rules are the same, and the document passed them.
    expect(g.validations()).toBe(1);
    expect(g.validated.get(g.documents[0] as DocumentNode)).toContain('counting');
  });

  it('asks mayKeep when the request is answered, so a key accepted by its own first request counts', async () => {
    let accepted = false;
    const g = gateway({ mayKeep: () => accepted });
    const answered = g.post('{ held }');
    await new Promise((resolve) => setImmediate(resolve));
    // The request's REST calls accept the key before it is answered.
    accepted = true;
    release();
    expect(await answered).toEqual({ status: 200, body: { data: { held: 'released' } } });
    expect(g.cache.get('{ held }')).toBe(g.documents[0]);
  });

  it('keeps nothing for a request mayKeep refuses, nor a document that failed validation', async () => {
    const refusing = gateway({ mayKeep: () => false });
    await refusing.post('{ balance }');
    await refusing.post('{ balance }');
    expect(refusing.cache.size).toBe(0);
    // Not kept: each request parses and validates its own.
    expect(refusing.documents[1]).not.toBe(refusing.documents[0]);
    expect(refusing.validations()).toBe(2);
    const keeping = gateway({ mayKeep: () => true });
    expect(await keeping.post('{ unknown }')).toMatchObject({
      body: { errors: [{ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] },
    });
    expect(keeping.cache.size).toBe(0);
  });

  it('shares a document not kept with the requests under way with its text, and forgets it after', async () => {
    const g = gateway({ mayKeep: () => false });
    const first = g.post('{ held }');
    await new Promise((resolve) => setImmediate(resolve));
    const second = g.post('{ held }');
    await new Promise((resolve) => setImmediate(resolve));
    expect(g.documents).toHaveLength(2);
    expect(g.documents[1]).toBe(g.documents[0]);
    release();
    await Promise.all([first, second]);
    expect(g.cache.size).toBe(0);
    const third = g.post('{ held }');
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await third;
    expect(g.documents[2]).not.toBe(g.documents[0]);
  });

  it('keeps nothing at a bound of 0, whatever mayKeep says', async () => {
    const g = gateway({ maxBytes: 0, mayKeep: () => true });
    await g.post('{ balance }');
    expect([g.cache.size, g.cache.get('{ balance }')]).toEqual([0, undefined]);
  });
});
