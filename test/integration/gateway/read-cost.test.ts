import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationCost, READ_COST } from '../../../src/execution/operation-cost.ts';
import { schema } from '../../../src/schema/index.ts';
import { DEFAULTS, startTestGateway, type TestGateway } from '../../support/gateway.ts';

/**
 * The cost limit counts the REST reads a document may make over a wallet's lists
 * (src/execution/operation-cost.ts, operationCost): a walk over the whole list counts the call budget,
 * once per list per request.
 */

/** Every wallet's deposits' totalCount: the whole deposit list, read once for all 20 wallets. */
const WALK = '{ wallets(first: 20) { nodes { deposits(first: 1) { totalCount } } } }';
/** Its fields alone: 1 + 20 × (nodes 1 + deposits 1 + 1 × totalCount 1) = 61. */
const WALK_FIELDS = 61;
const BUDGET = DEFAULTS.maxUpstreamCallsPerRequest;

let gw: TestGateway;
let key: string;

beforeAll(async () => {
  gw = await startTestGateway({ config: { queryLimits: { maxCost: 5_000 } } });
  const merchant = await gw.sandbox.world.merchant();
  key = merchant.key;
  const wallet = await gw.sandbox.world.wallet(merchant.id);
  await gw.sandbox.world.deposit(wallet.id, { amount: '5' });
});
afterAll(() => gw.close());

describe('the cost of REST reads over a wallet’s lists', () => {
  it('counts a whole-list walk at the call budget, and refuses it under a lower limit before any call but, once per key, a read of its wallets', async () => {
    for (const learnt of [false, true]) {
      gw.resetCalls();
      const response = await gw.request(WALK, {}, { key });
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([
        {
          message: expect.stringMatching(/^The operation's cost 10061 exceeds the limit of 5000/),
          extensions: {
            code: 'QUERY_LIMIT_EXCEEDED',
            cost: WALK_FIELDS + READ_COST * BUDGET,
            maxCost: 5_000,
          },
        },
      ]);
      // Indexed, the walk would be cheap: the first time, the key's wallets are read to learn
      // whose key it is (its merchant's index would count: merchants.ts); never again.
      expect(gw.upstreamCalls()).toEqual(learnt ? [] : ['GET /external/v1/wallets?page=1&size=100']);
    }
  });

  it('counts the walk once per list and filter, whatever the number of wallets; `last` without `before` walks too', () => {
    const cost = (query: string) => operationCost(schema, parse(query), undefined, {});
    expect(cost(WALK)).toBe(WALK_FIELDS + READ_COST * BUDGET);
    // A window of a wallet's list: its first page, one read for every wallet of the request.
    expect(cost('{ wallets(first: 20) { nodes { deposits(first: 1) { nodes { id } } } } }')).toBe(
      1 + 20 * (1 + (1 + 1 * 2)) + READ_COST,
    );
    expect(cost('{ wallets(first: 20) { nodes { deposits(last: 5) { nodes { id } } } } }')).toBe(
      1 + 20 * (1 + (1 + 5 * 2)) + READ_COST * BUDGET,
    );
    // Two walks together count no more than the request may make.
    expect(
      cost(
        '{ wallets(first: 20) { nodes { deposits(first: 1) { totalCount } withdrawalIntents(first: 1) { totalCount } } } }',
      ),
    ).toBe(1 + 20 * (1 + 2 + 2) + READ_COST * BUDGET);
    // The budget the gateway runs with is the one counted.
    expect(operationCost(schema, parse(WALK), undefined, {}, { maxUpstreamCalls: 10 })).toBe(
      WALK_FIELDS + READ_COST * 10,
    );
  });

  it('still answers a small window of every wallet under the same limit', async () => {
    const response = await gw.request(
      '{ wallets(first: 20) { nodes { deposits(first: 1) { nodes { amount } } } } }',
      {},
      { key },
    );
    expect(response.body).toEqual({
      data: { wallets: { nodes: [{ deposits: { nodes: [{ amount: '5.0000000000000000' }] } }] } },
    });
  });
});
