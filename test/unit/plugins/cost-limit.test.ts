import { type GraphQLObjectType, type GraphQLSchema, parse } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it, vi } from 'vitest';
import { OperationCosts, READ_COST } from '../../../src/execution/operation-cost.ts';
import { useCostLimit } from '../../../src/plugins/cost-limit.ts';
import { restLoad } from '../../../src/schema/rest-loads.ts';

/**
 * useCostLimit (src/plugins/cost-limit.ts) on a tiny schema: what it refuses before anything
 * runs, and how a merchant's whole-list walks take turns.
 */

const CALLS = 10;
const WALK = READ_COST * CALLS;

/** A wallet list whose `deposits` is declared a scan, as the gateway's is; `gate` holds a walk open. */
function tinySchema(gate: { wait: () => Promise<void>; resolved: string[] }) {
  const schema = createSchema({
    typeDefs: /* GraphQL */ `
      type Query { wallets(first: Int): WalletConnection }
      type WalletConnection { nodes: [Wallet!]! }
      type Wallet { id: ID! deposits(first: Int, last: Int, before: String): DepositConnection }
      type DepositConnection { nodes: [Deposit!]! totalCount: Int }
      type Deposit { id: ID! }
    `,
    resolvers: {
      Query: { wallets: () => ({ nodes: [{ id: 'w1' }] }) },
      Wallet: {
        // A walk (`last` without `before`) waits for the gate; a window does not.
        deposits: async (wallet: { id: string }, args: { last?: number }) => {
          gate.resolved.push(wallet.id);
          if (args.last !== undefined) await gate.wait();
          return { nodes: [{ id: 'd1' }], totalCount: 1 };
        },
      },
    },
  });
  const deposits = (schema.getType('Wallet') as GraphQLObjectType).getFields().deposits;
  Object.assign(deposits as object, {
    extensions: restLoad({ route: 'GET /deposits', loads: 'scan', calls: 1 }),
  });
  return schema;
}

interface Setup {
  maxCost?: number;
  walksPerKey?: number;
  learn?: { known: (scope: string) => boolean; merchantOf: () => Promise<void> };
}

function gateway(setup: Setup = {}) {
  const gate = { open: Promise.resolve(), wait: () => gate.open, resolved: [] as string[] };
  const costs = new OperationCosts(CALLS);
  const yoga = createYoga({
    schema: tinySchema(gate) as GraphQLSchema,
    context: ({ request }) => {
      const authorization = request.headers.get('authorization');
      return {
        authorization,
        caller: authorization && {
          scope: authorization,
          deadline: Date.now() + Number(request.headers.get('x-deadline-ms') ?? 60_000),
        },
      };
    },
    plugins: [
      useCostLimit({
        maxCost: setup.maxCost ?? 20_000,
        costs,
        ...(setup.walksPerKey !== undefined && { walksPerKey: setup.walksPerKey }),
        ...(setup.learn && {
          merchants: {
            groupOf: (scope: string) => `merchant-of-${scope}`,
            learn: { known: setup.learn.known, merchantOf: setup.learn.merchantOf },
          },
        }),
      }),
    ],
    maskedErrors: false,
  });
  const post = (query: string, key = 'k1', deadlineMs = 60_000) =>
    yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: key,
        'x-deadline-ms': String(deadlineMs),
      },
      body: JSON.stringify({ query }),
    });
  return { yoga, gate, post, costs };
}

const WINDOW = '{ wallets(first: 2) { nodes { deposits(first: 1) { nodes { id } } } } }';
const WALKING = '{ wallets(first: 2) { nodes { deposits(last: 1) { nodes { id } } } } }';
const COUNTING = '{ wallets(first: 2) { nodes { deposits(first: 1) { totalCount } } } }';

describe('useCostLimit', () => {
  it('runs a document within the limit, a window over a scan counting one read', async () => {
    const { post, costs, yoga } = gateway();
    const response = await post(WINDOW);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      data: { wallets: { nodes: [{ deposits: { nodes: [{ id: 'd1' }] } }] } },
    });
    const { schema } = yoga.getEnveloped();
    // wallets 1 + 2 × (nodes 1 + deposits (1 + 1 × (nodes 1 + id 1))) fields, plus one read.
    expect(costs.costOf(schema, parse(WINDOW), undefined, {}, undefined)).toBe(9 + READ_COST);
    // `last` without `before`, or totalCount, walks the list: the whole call budget.
    expect(costs.costOf(schema, parse(WALKING), undefined, {}, undefined)).toBe(9 + WALK);
    expect(costs.costOf(schema, parse(COUNTING), undefined, {}, undefined)).toBe(7 + WALK);
  });

  it('refuses a document over the limit before any resolver runs, with its cost', async () => {
    const { post, gate } = gateway({ maxCost: WALK });
    const response = await post(WALKING);
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.data).toBeNull();
    expect(body.errors[0].extensions).toEqual({
      code: 'QUERY_LIMIT_EXCEEDED',
      cost: 9 + WALK,
      maxCost: WALK,
    });
    expect(gate.resolved).toEqual([]);
  });

  it("lets a merchant's walks take turns: the next one waits for a free slot, first come first served", async () => {
    const { post, gate } = gateway({ walksPerKey: 1 });
    let open!: () => void;
    gate.open = new Promise<void>((resolve) => {
      open = resolve;
    });
    const first = post(WALKING);
    await vi.waitFor(() => expect(gate.resolved).toHaveLength(1));
    const second = post(WALKING);
    // Not a walk: passes beside it at once.
    const window = await post(WINDOW);
    expect(window.status).toBe(200);
    expect(gate.resolved).toHaveLength(2);
    // Another key of another merchant is not held either.
    const other = post(WALKING, 'k2');
    await vi.waitFor(() => expect(gate.resolved).toHaveLength(3));
    open();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    expect((await other).status).toBe(200);
    expect(gate.resolved).toHaveLength(4);
  });

  it('answers RATE_LIMITED, nothing run, when the deadline passes while waiting', async () => {
    const { post, gate } = gateway({ walksPerKey: 1 });
    let open!: () => void;
    gate.open = new Promise<void>((resolve) => {
      open = resolve;
    });
    const first = post(WALKING);
    await vi.waitFor(() => expect(gate.resolved).toHaveLength(1));
    const second = await post(WALKING, 'k1', 20);
    const body = await second.json();
    expect(body.errors[0].extensions).toMatchObject({
      code: 'RATE_LIMITED',
      walksPerKey: 1,
      retryAfterSeconds: 1,
    });
    expect(gate.resolved).toHaveLength(1);
    open();
    expect((await first).status).toBe(200);
  });

  it("learns a new key's merchant first only when its indexes would let the document through", async () => {
    const merchantOf = vi.fn(async () => {});
    const { post } = gateway({ maxCost: WALK, learn: { known: () => false, merchantOf } });
    // Within the limit either way: no read to learn it.
    expect((await post(WINDOW)).status).toBe(200);
    expect(merchantOf).not.toHaveBeenCalled();
    // Over the limit unindexed, within it indexed: learnt first (the index is still not there, so refused).
    expect((await post(WALKING)).status).toBe(400);
    expect(merchantOf).toHaveBeenCalledTimes(1);
  });

  it('passes everything when walksPerKey is 0', async () => {
    const { post, gate } = gateway({ walksPerKey: 0 });
    gate.open = new Promise<void>(() => {});
    void post(WALKING);
    void post(WALKING);
    await vi.waitFor(() => expect(gate.resolved).toHaveLength(2));
  });
});
