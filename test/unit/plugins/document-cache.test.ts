import fc from 'fast-check';
import { parse, specifiedRules, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createDocumentCache, retainedBytes } from '../../src/plugins/document-cache.ts';
import { schema } from '../../src/schema/index.ts';
import { requestTemplates } from '../support/generated-documents.ts';
import { heapUsed } from '../support/heap.ts';

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
