import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { authorizationOf } from '../../../src/context.ts';
import { useAuthentication } from '../../../src/plugins/authentication.ts';

/** Resolver calls: a refused operation must make none (no upstream call). */
let calls = 0;

const schema = createSchema<{ authorization: string | null }>({
  typeDefs: /* GraphQL */ `
    type Query { balance: String }
    type Subscription { ticks: Int }
  `,
  resolvers: {
    Query: {
      balance: () => {
        calls++;
        return '10.00';
      },
    },
    Subscription: {
      ticks: {
        subscribe: async function* () {
          calls++;
          yield { ticks: 1 };
        },
      },
    },
  },
});

// The context part the plugin reads, as createContextFactory builds it (src/context.ts).
const yoga = createYoga({
  schema,
  logging: false,
  context: ({ request }) => ({ authorization: authorizationOf(request) }),
  plugins: [useAuthentication()],
});

async function post(body: object, headers: Record<string, string> = {}) {
  const response = await yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

const REFUSED = {
  data: null,
  errors: [
    {
      message: 'A valid API key is required: send Authorization: Bearer <API key>.',
      extensions: { code: 'UNAUTHENTICATED' },
    },
  ],
};

describe('useAuthentication', () => {
  it('refuses an operation without a key with 401 and UNAUTHENTICATED, before any resolver runs', async () => {
    calls = 0;
    expect(await post({ query: '{ balance }' })).toEqual({ status: 401, body: REFUSED });
    expect(calls).toBe(0);
  });

  it('refuses a malformed Authorization as a missing one', async () => {
    calls = 0;
    for (const authorization of ['Basic dXNlcjpwYXNz', 'Bearer ', 'Bearer two words', 'mw_live_key']) {
      expect(await post({ query: '{ balance }' }, { authorization })).toEqual({ status: 401, body: REFUSED });
    }
    expect(calls).toBe(0);
  });

  it('runs an operation with a Bearer key', async () => {
    calls = 0;
    expect(await post({ query: '{ balance }' }, { authorization: 'Bearer mw_test_key' })).toEqual({
      status: 200,
      body: { data: { balance: '10.00' } },
    });
    expect(calls).toBe(1);
  });

  it('lets introspection alone through without a key, inline fragments included', async () => {
    expect(await post({ query: '{ __typename }' })).toEqual({
      status: 200,
      body: { data: { __typename: 'Query' } },
    });
    expect(await post({ query: '{ ... on Query { __schema { queryType { name } } } }' })).toEqual({
      status: 200,
      body: { data: { __schema: { queryType: { name: 'Query' } } } },
    });
  });

  it('refuses introspection beside a field of merchant data', async () => {
    calls = 0;
    expect(await post({ query: '{ __typename balance }' })).toEqual({ status: 401, body: REFUSED });
    expect(await post({ query: '{ __typename ... on Query { balance } }' })).toEqual({
      status: 401,
      body: REFUSED,
    });
    expect(calls).toBe(0);
  });

  it('judges the operation that runs, by operationName', async () => {
    const query = 'query Schema { __typename } query Balance { balance }';
    expect(await post({ query, operationName: 'Schema' })).toMatchObject({ status: 200 });
    expect(await post({ query, operationName: 'Balance' })).toEqual({ status: 401, body: REFUSED });
  });

  it('refuses a subscription without a key before it subscribes', async () => {
    calls = 0;
    expect(await post({ query: 'subscription { ticks }' })).toEqual({ status: 401, body: REFUSED });
    expect(calls).toBe(0);
  });
});
