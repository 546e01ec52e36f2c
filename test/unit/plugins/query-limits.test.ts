import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { nestingError, type QueryLimits, useQueryLimits } from '../../../src/plugins/query-limits.ts';
import { INPUT_LIMITS } from '../../../src/schema/input-limits.ts';

const LIMITS: QueryLimits = {
  maxDepth: 3,
  maxAliases: 2,
  maxTokens: 60,
  maxDirectives: 2,
  maxCost: 30,
  walksPerKey: 2,
  blockFieldSuggestions: true,
};

interface Item {
  id: string;
}

function gateway(limits: Partial<QueryLimits> = {}) {
  let executed = 0;
  const item = (id: string): Item => ({ id });
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: /* GraphQL */ `
        type Query {
          greeting(input: Input): String!
          items(first: Int, last: Int): ItemConnection!
        }
        input Input { text: String }
        type ItemConnection { nodes: [Item!]! }
        type Item { id: ID! parent: Item }
      `,
      resolvers: {
        Query: {
          greeting: () => {
            executed++;
            return 'hi';
          },
          items: (_root, args: { first?: number }) => {
            executed++;
            return { nodes: Array.from({ length: Math.min(args.first ?? 20, 3) }, (_, i) => item(`i${i}`)) };
          },
        },
        Item: { parent: () => item('p') },
      },
    }),
    logging: false,
    plugins: useQueryLimits({ ...LIMITS, ...limits }),
  });
  const post = async (
    query: string,
    extra: { variables?: unknown; extensions?: unknown } = {},
    accept = 'application/graphql-response+json',
  ) => {
    const response = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept },
      body: JSON.stringify({ query, ...extra }),
    });
    return { status: response.status, body: await response.json() };
  };
  return { post, executed: () => executed };
}

/** The one error of a refused document, which must be QUERY_LIMIT_EXCEEDED with HTTP 400 and no parser prefix. */
function expectLimitRefusal(answer: { status: number; body: { data?: unknown; errors?: unknown[] } }) {
  expect(answer.status).toBe(400);
  expect(answer.body.errors).toHaveLength(1);
  const [error] = answer.body.errors as { message: string; extensions: Record<string, unknown> }[];
  expect(error?.extensions.code).toBe('QUERY_LIMIT_EXCEEDED');
  expect(error?.extensions).not.toHaveProperty('http');
  expect(error?.message).not.toMatch(/^Syntax Error/);
  return error as { message: string; extensions: Record<string, unknown> };
}

describe('useQueryLimits', () => {
  it('answers a document within every limit', async () => {
    const g = gateway();
    expect(await g.post('{ items(first: 2) { nodes { id } } }')).toEqual({
      status: 200,
      body: { data: { items: { nodes: [{ id: 'i0' }, { id: 'i1' }] } } },
    });
  });

  it('refuses a document deeper than maxDepth, before anything runs', async () => {
    const g = gateway();
    const error = expectLimitRefusal(await g.post('{ items(first: 1) { nodes { parent { id } } } }'));
    expect(error.message).toContain('3');
    expect(g.executed()).toBe(0);
  });

  it('refuses more aliases than maxAliases', async () => {
    const g = gateway();
    expectLimitRefusal(await g.post('{ a: greeting b: greeting c: greeting }'));
    expect(g.executed()).toBe(0);
    expect((await g.post('{ a: greeting b: greeting }')).status).toBe(200);
  });

  it('refuses more directives than maxDirectives', async () => {
    const g = gateway();
    expectLimitRefusal(
      await g.post(
        '{ greeting @include(if: true) @skip(if: false) items(first: 1) @include(if: true) { nodes { id } } }',
      ),
    );
    expect(g.executed()).toBe(0);
  });

  it('refuses more tokens than maxTokens with 400, whatever the client accepts, though the parser refuses it', async () => {
    const g = gateway();
    const long = `{ ${'greeting '.repeat(60)}}`;
    for (const accept of ['application/graphql-response+json', 'application/json']) {
      const answer = await g.post(long, {}, accept);
      expect(expectLimitRefusal(answer).message).toBe(`Token limit of ${LIMITS.maxTokens} exceeded.`);
      expect(answer.body).not.toHaveProperty('data');
    }
    expect(g.executed()).toBe(0);
  });

  it('refuses an operation whose cost exceeds maxCost, with its cost, before it executes', async () => {
    const g = gateway();
    // items costs 1 + first × (nodes 1 + id 1).
    expect((await g.post('{ items(first: 14) { nodes { id } } }')).status).toBe(200);
    const answer = await g.post('{ items(first: 15) { nodes { id } } }');
    const error = expectLimitRefusal(answer);
    expect(answer.body.data).toBeNull();
    expect(error.extensions).toEqual({ code: 'QUERY_LIMIT_EXCEEDED', cost: 31, maxCost: 30 });
    expect(error.message).toMatch(/^The operation's cost 31 exceeds the limit of 30/);
    expect(g.executed()).toBe(1);
  });

  it('counts the default window of a connection without first/last, and defaults of variables', async () => {
    const g = gateway();
    expectLimitRefusal(await g.post('{ items { nodes { id } } }'));
    expectLimitRefusal(await g.post('query($n: Int = 100) { items(first: $n) { nodes { id } } }'));
    expectLimitRefusal(
      await g.post('query($n: Int) { items(first: $n) { nodes { id } } }', { variables: { n: 50 } }),
    );
    expect(g.executed()).toBe(0);
  });

  it('hides field suggestions when told to (introspection off), and keeps them otherwise', async () => {
    const blocked = await gateway().post('{ greetin }');
    expect(blocked.status).toBe(400);
    expect(JSON.stringify(blocked.body)).not.toContain('Did you mean');
    const shown = await gateway({ blockFieldSuggestions: false }).post('{ greetin }');
    expect(shown.body.errors[0].message).toBe(
      'Cannot query field "greetin" on type "Query". Did you mean "greeting"?',
    );
  });

  it('refuses variables or extensions nested deeper than any input, with 400 BAD_USER_INPUT, before parsing', async () => {
    const g = gateway();
    let deep: unknown = 'x';
    for (let i = 0; i < INPUT_LIMITS.variableDepth + 1; i++) deep = [deep];
    for (const [name, extra] of [
      ['variables', { variables: { input: deep } }],
      ['extensions', { extensions: { deep } }],
    ] as const) {
      expect(await g.post('query($input: Input) { greeting(input: $input) }', extra)).toEqual({
        status: 400,
        body: {
          errors: [
            {
              message: `The request's ${name} nest objects and lists more than ${INPUT_LIMITS.variableDepth} levels deep; no input of this API does.`,
              extensions: { code: 'BAD_USER_INPUT' },
            },
          ],
        },
      });
    }
    // Even a document that does not parse: the variables are looked at first.
    const unparsed = await g.post('{', { variables: { deep } });
    expect(unparsed.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(g.executed()).toBe(0);
  });
});

describe('nestingError', () => {
  it('is null for params within the depth, and names the part that is too deep', () => {
    expect(nestingError({ variables: { a: [[{ b: 1 }]] }, extensions: {} })).toBeNull();
    expect(nestingError({ variables: [[['x']]] }, 2)?.message).toContain('variables');
    expect(nestingError({ variables: {}, extensions: { a: { b: { c: 1 } } } }, 2)?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      http: { status: 400 },
    });
  });
});
