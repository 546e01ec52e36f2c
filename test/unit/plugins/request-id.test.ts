import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { requestIdOf, SAFE_REQUEST_ID, useRequestId } from '../../../src/plugins/request-id.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function gateway(plugins: Plugin[] = []) {
  const seen: string[] = [];
  const yoga = createYoga<{ request: Request }>({
    schema: createSchema<{ request: Request }>({
      typeDefs: 'type Query { greeting: String! }',
      resolvers: {
        Query: {
          greeting: (_root, _args, context) => {
            // What the logs and the REST calls of this request use.
            seen.push(requestIdOf(context.request));
            return 'hi';
          },
        },
      },
    }),
    logging: false,
    plugins: [...plugins, useRequestId()],
  });
  const get = (headers: Record<string, string> = {}, path = '/graphql?query=%7Bgreeting%7D') =>
    yoga.fetch(`http://yoga${path}`, { headers });
  return { get, seen };
}

describe('useRequestId', () => {
  it("echoes the caller's X-Request-Id when it is safe to log, and uses it for the request", async () => {
    const g = gateway();
    for (const id of ['abc-123', 'A.b_c:d-e', 'x'.repeat(128)]) {
      const response = await g.get({ 'x-request-id': id });
      expect(response.headers.get('x-request-id')).toBe(id);
    }
    expect(g.seen).toEqual(['abc-123', 'A.b_c:d-e', 'x'.repeat(128)]);
  });

  it('replaces a missing or unsafe id with a new UUID, the same one the request used', async () => {
    const g = gateway();
    const given = [undefined, '', 'x'.repeat(129), 'a b', '<script>', 'id\u00e9', 'a/b', '"quoted"'];
    const answered: string[] = [];
    for (const id of given) {
      const response = await g.get(id === undefined ? {} : { 'x-request-id': id });
      const echoed = response.headers.get('x-request-id') ?? '';
      expect(echoed).toMatch(UUID);
      answered.push(echoed);
    }
    expect(g.seen).toEqual(answered);
    expect(new Set(answered).size).toBe(given.length);
  });

  it('sets the header on answers that never reached GraphQL', async () => {
    const refuse: Plugin = {
      onRequest({ endResponse }) {
        endResponse(new Response('no', { status: 400 }));
      },
    };
    const g = gateway([refuse]);
    const response = await g.get({ 'x-request-id': 'refused-1' });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-request-id')).toBe('refused-1');
    expect(g.seen).toEqual([]);
    const fresh = await g.get();
    expect(fresh.headers.get('x-request-id')).toMatch(UUID);
  });

  it('sets the header on Yoga’s own errors and other paths', async () => {
    const g = gateway();
    const badQuery = await g.get({ 'x-request-id': 'bad-1' }, '/graphql?query=%7B');
    expect((await badQuery.json()).errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(badQuery.headers.get('x-request-id')).toBe('bad-1');
    const elsewhere = await g.get({ 'x-request-id': 'nowhere-1' }, '/nowhere');
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.headers.get('x-request-id')).toBe('nowhere-1');
    expect(g.seen).toEqual([]);
  });

  it('gives one request one id, however often it is asked', () => {
    const request = new Request('http://yoga/graphql');
    const id = requestIdOf(request);
    expect(id).toMatch(UUID);
    expect(requestIdOf(request)).toBe(id);
    expect(requestIdOf(new Request('http://yoga/graphql'))).not.toBe(id);
    expect(SAFE_REQUEST_ID.test(id)).toBe(true);
  });
});
