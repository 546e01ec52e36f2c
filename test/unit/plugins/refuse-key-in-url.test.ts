import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { refusalCodeOf } from '../../../src/plugins/refusal.ts';
import { useRefuseKeyInURL } from '../../../src/plugins/refuse-key-in-url.ts';

const REFUSED = {
  errors: [
    {
      message:
        'API keys must not be sent in URLs. Send Authorization: Bearer <API key> as a header, and revoke a key that was sent in a URL.',
      extensions: { code: 'API_KEY_IN_URL' },
    },
  ],
};

function gateway() {
  let executed = 0;
  const codes: (string | undefined)[] = [];
  /** Stands for every plugin after it: nothing may read the URL of a refused request. */
  const later: Plugin = {
    onRequest({ url }) {
      urlsRead.push(url.search);
    },
    onResponse({ request }) {
      codes.push(refusalCodeOf(request));
    },
  };
  const urlsRead: string[] = [];
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: 'type Query { greeting: String! }',
      resolvers: {
        Query: {
          greeting: () => {
            executed++;
            return 'hi';
          },
        },
      },
    }),
    logging: false,
    plugins: [useRefuseKeyInURL(), later],
  });
  return {
    get: (search: string, path = '/graphql') =>
      yoga.fetch(`http://yoga/graphql${path === '/graphql' ? '' : path}${search}`),
    executed: () => executed,
    codes,
    urlsRead,
  };
}

describe('useRefuseKeyInURL', () => {
  it('refuses a credential parameter with 400 API_KEY_IN_URL as JSON, before any later plugin or GraphQL runs', async () => {
    const g = gateway();
    const response = await g.get('?query=%7Bgreeting%7D&api_key=mw_live_secret');
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toEqual(REFUSED);
    expect(g.executed()).toBe(0);
    expect(g.urlsRead).toEqual([]);
    // The code is kept for the access log and the metrics, which see no GraphQL result.
    expect(g.codes).toEqual(['API_KEY_IN_URL']);
  });

  it.each([
    'apikey',
    'api-key',
    'key',
    'token',
    'access_token',
    'accesstoken',
    'auth',
    'authorization',
    'bearer',
    'API_KEY',
    'Token',
    'Access_Token',
  ])('refuses the parameter %s, whatever its case and value', async (name) => {
    const response = await gateway().get(`?query=%7Bgreeting%7D&${name}=x`);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(REFUSED);
  });

  it('refuses a Bearer value under any parameter name', async () => {
    const g = gateway();
    for (const value of ['Bearer%20mw_live_secret', 'bearer%09x', 'BEARER+x']) {
      const response = await g.get(`?query=%7Bgreeting%7D&operationName=${value}`);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual(REFUSED);
    }
    expect(g.executed()).toBe(0);
  });

  it('refuses on every path, not only /graphql', async () => {
    const response = await gateway().get('?token=x', '/healthz');
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(REFUSED);
  });

  it('lets through parameters that only resemble a credential', async () => {
    const g = gateway();
    for (const search of [
      '?query=%7Bgreeting%7D',
      '?query=%7Bgreeting%7D&keys=1&monkey=2&tokens=3&author=4',
      '?query=%7Bgreeting%7D&note=bearer',
      '?query=%7Bgreeting%7D&x=Bearer',
    ]) {
      const response = await g.get(search);
      expect(response.status, search).toBe(200);
      expect(await response.json()).toEqual({ data: { greeting: 'hi' } });
    }
    expect(g.executed()).toBe(4);
    expect(g.codes).toEqual([undefined, undefined, undefined, undefined]);
  });
});
