import { GraphQLError } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { ECHO_PREFIX } from '../../../src/errors/echoes.ts';
import { badUserInput } from '../../../src/errors/errors.ts';
import { maskUncodedError, useErrorContract } from '../../../src/plugins/error-contract.ts';

const schema = createSchema({
  typeDefs: /* GraphQL */ `
    type Query {
      balance(n: Int): String
      echo(n: Int!): Int
      failing: String
      refused: String
      notList: [String]
      wallet: Wallet
      nodes: [String]!
    }
    union Wallet = Tron | Ethereum
    type Tron { id: ID }
    type Ethereum { id: ID }
    type Subscription { ticks: String }
  `,
  resolvers: {
    Query: {
      balance: () => '10.00',
      echo: (_: unknown, { n }: { n: number }) => n,
      failing: () => {
        throw new Error('socket hang up at 10.0.0.7');
      },
      refused: () => {
        throw badUserInput('amount must be positive');
      },
      notList: () => 'not a list',
      // No type the union knows: the executor's own error, without a code.
      wallet: () => ({ id: 'w1' }),
      nodes: () => {
        throw badUserInput('nodes failed');
      },
    },
    Wallet: { __resolveType: () => undefined },
    Subscription: {
      ticks: {
        subscribe: async function* () {
          yield { ticks: 'first' };
        },
        resolve: () => {
          throw new GraphQLError(`Value "${'v'.repeat(5_000)}" is not a tick`, {
            extensions: { code: 'BAD_USER_INPUT' },
          });
        },
      },
    },
  },
});

// As yoga.ts wires them: Yoga's masking with maskUncodedError, and the plugin.
const yoga = createYoga({
  schema,
  logging: false,
  maskedErrors: { maskError: maskUncodedError },
  plugins: [useErrorContract()],
});

async function send(body: string, headers: Record<string, string> = {}) {
  const response = await yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

const post = (query: string, variables?: Record<string, unknown>, headers?: Record<string, string>) =>
  send(JSON.stringify({ query, variables }), headers);

const UNEXPECTED = { message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } };

describe('useErrorContract', () => {
  it('gives variables that cannot be coerced BAD_USER_INPUT, at HTTP 400', async () => {
    expect(await post('query($n: Int) { balance(n: $n) }', { n: 'x' })).toEqual({
      status: 400,
      body: {
        errors: [
          {
            message: 'Variable "$n" got invalid value "x"; Int cannot represent non-integer value: "x"',
            locations: [{ line: 1, column: 7 }],
            extensions: { code: 'BAD_USER_INPUT' },
          },
        ],
      },
    });
  });

  it("removes the JSON parser's originalError, and states 400 for every media type", async () => {
    for (const accept of ['application/json', 'application/graphql-response+json']) {
      expect(await send('{"query": "{ balance }", "secret": "sk_live_', { accept })).toEqual({
        status: 400,
        body: { errors: [{ message: 'POST body sent invalid JSON.', extensions: { code: 'BAD_REQUEST' } }] },
      });
    }
  });

  it('answers a POST no parser takes with 415 and UNSUPPORTED_MEDIA_TYPE, not an empty body', async () => {
    expect(await send('<query/>', { 'content-type': 'application/xml' })).toEqual({
      status: 415,
      body: {
        errors: [
          {
            message:
              'Send the request as application/json (or application/graphql-response+json for the answer).',
            extensions: { code: 'UNSUPPORTED_MEDIA_TYPE' },
          },
        ],
      },
    });
  });

  it('repeats at most a prefix of a long name or value the client sent', async () => {
    const field = `f${'x'.repeat(5_000)}`;
    const validation = await post(`{ ${field} }`);
    expect(validation.body.errors[0].message).toBe(
      `Cannot query field "${field.slice(0, ECHO_PREFIX)}…" on type "Query".`,
    );
    const variable = await post('query($n: Int) { balance(n: $n) }', { n: 'y'.repeat(5_000) });
    // The printed value's opening quote counts in its prefix.
    const prefix = 'y'.repeat(ECHO_PREFIX - 1);
    expect(variable.body.errors[0].message).toBe(
      `Variable "$n" got invalid value "${prefix}…"; Int cannot represent non-integer value: "${prefix}…"`,
    );
    expect(variable.body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT' });
  });

  it('shortens the echoes in each event of a subscription', async () => {
    const response = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { ticks }' }),
    });
    const text = await response.text();
    expect(text).toContain(`"message":"Value \\"${'v'.repeat(ECHO_PREFIX)}…\\" is not a tick"`);
    expect(text).not.toContain('v'.repeat(ECHO_PREFIX + 1));
  });

  it('lists only the error that nulled `data`, not the ones its siblings raised by then', async () => {
    expect(await post('{ refused nodes }')).toEqual({
      status: 200,
      body: {
        data: null,
        errors: [
          {
            message: 'nodes failed',
            locations: [{ line: 1, column: 11 }],
            path: ['nodes'],
            extensions: { code: 'BAD_USER_INPUT' },
          },
        ],
      },
    });
  });
});

describe('maskUncodedError', () => {
  it("masks a resolver's error as Unexpected error. with INTERNAL_SERVER_ERROR, and keeps coded errors", async () => {
    expect(await post('{ failing refused }')).toEqual({
      status: 200,
      body: {
        data: { failing: null, refused: null },
        errors: [
          { ...UNEXPECTED, locations: [{ line: 1, column: 3 }], path: ['failing'] },
          {
            message: 'amount must be positive',
            locations: [{ line: 1, column: 11 }],
            path: ['refused'],
            extensions: { code: 'BAD_USER_INPUT' },
          },
        ],
      },
    });
  });

  it("masks the executor's own uncoded field errors (a list that is not one, an unresolved type)", async () => {
    expect(await post('{ notList wallet { __typename } }')).toEqual({
      status: 200,
      body: {
        data: { notList: null, wallet: null },
        errors: [
          { ...UNEXPECTED, locations: [{ line: 1, column: 3 }], path: ['notList'] },
          { ...UNEXPECTED, locations: [{ line: 1, column: 11 }], path: ['wallet'] },
        ],
      },
    });
  });

  it('gives an argument made null at run time BAD_USER_INPUT, with its message', async () => {
    expect(await post('query($n: Int = 1) { echo(n: $n) }', { n: null })).toEqual({
      status: 200,
      body: {
        data: { echo: null },
        errors: [
          {
            message: 'Argument "n" of non-null type "Int!" must not be null.',
            locations: [{ line: 1, column: 30 }],
            path: ['echo'],
            extensions: { code: 'BAD_USER_INPUT' },
          },
        ],
      },
    });
    const skipped = await post('query($v: Boolean = false) { balance @skip(if: $v) }', { v: null });
    expect(skipped.body.errors).toEqual([
      {
        message: 'Argument "if" of non-null type "Boolean!" must not be null.',
        locations: [{ line: 1, column: 48 }],
        extensions: { code: 'BAD_USER_INPUT' },
      },
    ]);
  });
});
