import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useReservedResponseKeys } from '../../../src/plugins/reserved-response-keys.ts';

const MESSAGE =
  'The response key "then" is reserved: a result object with a "then" member is taken for a promise. Choose another alias.';

function gateway() {
  let executed = 0;
  const yoga = createYoga({
    schema: createSchema({
      // `then` has no resolver: a field of that name must never run either.
      typeDefs: 'type Query { greeting: String! wallet: Wallet! then: String! } type Wallet { id: ID! }',
      resolvers: {
        Query: {
          greeting: () => {
            executed++;
            return 'hi';
          },
          wallet: () => {
            executed++;
            return { id: 'w1' };
          },
        },
      },
    }),
    logging: false,
    plugins: [useReservedResponseKeys()],
  });
  const post = async (query: string) => {
    const response = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query }),
    });
    return { status: response.status, body: await response.json() };
  };
  return { post, executed: () => executed };
}

describe('useReservedResponseKeys', () => {
  it('refuses `then` as an alias at validation, with GRAPHQL_VALIDATION_FAILED and its location, before anything runs', async () => {
    const g = gateway();
    expect(await g.post('{ greeting then: greeting }')).toEqual({
      status: 400,
      body: {
        errors: [
          {
            message: MESSAGE,
            locations: [{ line: 1, column: 12 }],
            extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
          },
        ],
      },
    });
    expect(g.executed()).toBe(0);
  });

  it('refuses it at any depth, inside fragments, and as a field name', async () => {
    const g = gateway();
    for (const query of [
      '{ wallet { then: id } }',
      '{ ...F } fragment F on Query { wallet { then: id } }',
      '{ ... on Query { then: greeting } }',
      '{ then }',
    ]) {
      const { status, body } = await g.post(query);
      expect(status, query).toBe(400);
      expect(body.errors.map((e: { message: string }) => e.message)).toEqual([MESSAGE]);
    }
    expect(g.executed()).toBe(0);
  });

  it('reports each use of it', async () => {
    const { body } = await gateway().post('{ then: greeting wallet { then: id } }');
    expect(body.errors).toHaveLength(2);
  });

  it('lets every other response key through, case-sensitive', async () => {
    const g = gateway();
    expect(await g.post('{ Then: greeting thenable: greeting theN: greeting wallet { id } }')).toEqual({
      status: 200,
      body: { data: { Then: 'hi', thenable: 'hi', theN: 'hi', wallet: { id: 'w1' } } },
    });
  });
});
