import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useCSRFHeaderRequired } from '../../../src/plugins/csrf-header-required.ts';

let calls = 0;

const schema = createSchema({
  typeDefs: 'type Query { balance: String }',
  resolvers: {
    Query: {
      balance: () => {
        calls++;
        return '10.00';
      },
    },
  },
});

// As yoga.ts wires it.
const yoga = createYoga({
  schema,
  logging: false,
  plugins: [useCSRFHeaderRequired(['x-graphql-csrf', 'x-graphql-yoga-csrf'])],
});

async function send(init: RequestInit & { path?: string }) {
  const response = await yoga.fetch(`http://yoga${init.path ?? '/graphql?query=%7Bbalance%7D'}`, init);
  return { status: response.status, body: await response.json() };
}

const REFUSED = {
  errors: [
    {
      message:
        'Send Authorization: Bearer <API key>. A request without a key that a browser could send cross-site (a GET, a form or text/plain POST) must also carry an x-graphql-csrf header.',
      extensions: { code: 'CSRF_HEADER_REQUIRED' },
    },
  ],
};

const ANSWERED = { status: 200, body: { data: { balance: '10.00' } } };

describe('useCSRFHeaderRequired', () => {
  it('refuses a keyless GET without a CSRF header: 403, CSRF_HEADER_REQUIRED, nothing run', async () => {
    calls = 0;
    expect(await send({ headers: { accept: 'application/json' } })).toEqual({ status: 403, body: REFUSED });
    expect(calls).toBe(0);
  });

  it('answers a keyless GET that carries either CSRF header', async () => {
    for (const name of ['x-graphql-csrf', 'x-graphql-yoga-csrf']) {
      expect(await send({ headers: { accept: 'application/json', [name]: '1' } })).toEqual(ANSWERED);
    }
  });

  it('answers a GET with a Bearer key and no CSRF header', async () => {
    expect(
      await send({ headers: { accept: 'application/json', authorization: 'Bearer mw_test_key' } }),
    ).toEqual(ANSWERED);
  });

  it('refuses a GET whose Authorization is not a Bearer key (a browser adds Basic by itself)', async () => {
    for (const authorization of ['Basic dXNlcjpwYXNz', 'Bearer two words', 'Bearer ']) {
      expect(await send({ headers: { accept: 'application/json', authorization } })).toEqual({
        status: 403,
        body: REFUSED,
      });
    }
  });

  it('refuses keyless form and text/plain POSTs, and lets a JSON POST (preflighted) through', async () => {
    for (const type of [
      'application/x-www-form-urlencoded',
      'text/plain',
      'multipart/form-data; boundary=x',
    ]) {
      expect(
        await send({
          path: '/graphql',
          method: 'POST',
          headers: { 'content-type': type, accept: 'application/json' },
          body: 'query=%7Bbalance%7D',
        }),
      ).toEqual({ status: 403, body: REFUSED });
    }
    expect(
      await send({
        path: '/graphql',
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query: '{ balance }' }),
      }),
    ).toEqual(ANSWERED);
  });
});
