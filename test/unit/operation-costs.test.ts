import fc from 'fast-check';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { OperationCosts, operationCost } from '../../src/execution/operation-cost.ts';
import { schema } from '../../src/schema/index.ts';

/**
 * OperationCosts keeps each cost it computed, by document, indexed lists and the values of the
 * variables operationCost reads (first, last, status): a kept cost must be the one operationCost
 * computes for the request at hand, whatever variables came before it.
 */
const documents = [
  'query W($id: ID!) { wallet(id: $id) { address deposits(first: 10) { nodes { id } } } }',
  'query D($n: Int, $after: String) { deposits(first: $n, after: $after) { nodes { id } } }',
  'query L($n: Int) { wallets(first: 3) { nodes { deposits(last: $n) { nodes { id } totalCount } } } }',
  'query S($s: DepositStatus, $n: Int) { wallets(first: $n) { nodes { deposits(first: 5, status: $s) { totalCount } } } }',
  'query I($list: [Int]) { wallets(first: 2) { nodes { id } } }',
  'query F($n: Int = 1000, $s: DepositStatus = COMPLETED) { wallets(first: $n) { nodes { deposits(first: $n, status: $s) { nodes { id } } } } }',
  'query P($constructor: DepositStatus, $toString: Int) { wallets(first: $toString) { nodes { deposits(first: 5, status: $constructor) { totalCount } } } }',
].map((text) => parse(text));

const values = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.integer({ min: -2, max: 2_000 }),
  fc.constantFrom(Number.POSITIVE_INFINITY, Number.NaN, 1.5, '10', 'COMPLETED', 'PENDING'),
);
const requests = fc.record({
  document: fc.integer({ min: 0, max: documents.length - 1 }),
  variables: fc.record(
    {
      id: fc.string(),
      n: values,
      s: values,
      after: fc.option(fc.string()),
      list: fc.array(values),
      constructor: values,
      toString: values,
    },
    { requiredKeys: [] },
  ),
  indexed: fc.boolean(),
});

describe('OperationCosts', () => {
  it('answers what operationCost computes, for any sequence of requests', () => {
    fc.assert(
      fc.property(fc.array(requests, { minLength: 1, maxLength: 40 }), (sequence) => {
        const costs = new OperationCosts(100, (scope) => scope === 'indexed');
        for (const { document, variables, indexed } of sequence) {
          const doc = documents[document] as (typeof documents)[number];
          const expected = operationCost(schema, doc, undefined, variables, {
            maxUpstreamCalls: 100,
            indexed: new Set(indexed ? ['Wallet.deposits', 'Wallet.withdrawalIntents'] : []),
          });
          expect(costs.costOf(schema, doc, undefined, variables, indexed ? 'indexed' : 'plain')).toBe(
            expected,
          );
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('operationCost', () => {
  it('counts a variable’s default when the request gives no value, as the executors do', () => {
    const document = parse(
      'query Q($n: Int = 1000) { wallets(first: $n) { nodes { deposits(first: $n) { nodes { id amount } } } } }',
    );
    const explicit = operationCost(schema, document, undefined, { n: 1000 });
    expect(operationCost(schema, document, undefined, {})).toBe(explicit);
    expect(new OperationCosts(100).costOf(schema, document, undefined, {}, undefined)).toBe(explicit);
    // An explicit null is the caller's value, not the default's.
    expect(operationCost(schema, document, undefined, { n: null })).toBeLessThan(explicit);
  });

  it('reads only the variables the caller sent, not Object.prototype’s', () => {
    const document = parse(
      'query P($constructor: DepositStatus) { wallets(first: 2) { nodes { deposits(first: 5, status: $constructor) { totalCount } deposits2: deposits(first: 5, status: null) { totalCount } } } }',
    );
    const costs = new OperationCosts(100);
    const sent = costs.costOf(schema, document, undefined, { constructor: null }, undefined);
    expect(costs.costOf(schema, document, undefined, {}, undefined)).toBe(
      operationCost(schema, document, undefined, {}),
    );
    expect(operationCost(schema, document, undefined, {})).toBe(sent);
  });

  it('keeps no cost for long values, and at most its bound in all', () => {
    const document = parse('query S($s: DepositStatus) { deposits(first: 5, status: $s) { totalCount } }');
    const costs = new OperationCosts(100);
    const known = (costs as unknown as { known: { size: number } }).known;
    costs.costOf(schema, document, undefined, { s: 'x'.repeat(90_000) }, undefined);
    expect(known.size).toBe(0);
    for (let n = 0; n < 12_000; n++) costs.costOf(schema, document, undefined, { s: `S${n}` }, undefined);
    expect(known.size).toBe(10_000);
  });
});
