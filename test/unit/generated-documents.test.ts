import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.ts';
import { isValid, requestTemplates } from '../support/generated-documents.ts';

/**
 * The differential test's generator (test/support/generated-documents.ts) keeps producing what that
 * test is for: valid documents, with every feature it promises present in a sample of 500.
 */
describe('documents generated from the schema', () => {
  const samples = fc.sample(requestTemplates(schema), { numRuns: 500, seed: 7 });
  const share = (pattern: RegExp) => samples.filter((s) => pattern.test(s.query)).length / samples.length;

  it('validate against the schema', () => {
    expect(samples.filter((s) => !isValid(schema, s))).toEqual([]);
  });

  it.each([
    ['@skip or @include with a literal condition', /@(skip|include)\(if: (true|false)\)/],
    ['@skip or @include with a variable condition', /@(skip|include)\(if: \$v\d+\)/],
    ['a nullable condition variable with a default', /\$v\d+: Boolean = (true|false)/],
    ['a named fragment spread twice', /(\.\.\.F\d+)\b[\s\S]*\1\b/],
    [
      'an inline fragment on an interface or a union',
      /\.\.\. on (Node|UserError|CreateWithdrawalIntentPayload)\b/,
    ],
    ['an alias named then', /\bthen: /],
    ['a __proto__ alias', /\b__proto__: /],
    ['a mutation', /^mutation/],
    ['node(id:)', /\bnode\(id: /],
    ['nodes(ids:)', /\bnodes\(ids: /],
    ['a cursor', /\b(after|before): /],
    ['a nested connection', /\b(deposits|withdrawalIntents)\([^)]*\) \{[^}]*\b(nodes|edges)\b/],
    ['a string literal', /\(\w+: "/],
  ])('hold %s', (_what, pattern) => {
    expect(share(pattern)).toBeGreaterThan(0.01);
  });

  it('repeat a response key with another selection', () => {
    const repeated = samples.filter((s) => {
      const keys = [...s.query.matchAll(/\b(\w+)(?:\([^)]*\))? (?:@\w+\([^)]*\) )?\{/g)].map((m) => m[1]);
      return new Set(keys).size < keys.length;
    });
    expect(repeated.length / samples.length).toBeGreaterThan(0.05);
  });
});
