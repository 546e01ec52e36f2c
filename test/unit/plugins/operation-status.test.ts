import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../../src/errors/error-codes.ts';
import { GatewayError } from '../../../src/errors/errors.ts';
import { answersGraphQLResponseJson, useOperationStatus } from '../../../src/plugins/operation-status.ts';

/** What each root field does: answer, or fail with a code (and a Retry-After when given). */
type Outcome = 'ok' | { code: ErrorCode; retryAfterSeconds?: number };

const failure = (outcome: Outcome, field: string) => {
  if (outcome === 'ok') return field;
  const { code, retryAfterSeconds } = outcome;
  throw new GatewayError(code, `${field} failed with ${code}`, {
    ...(retryAfterSeconds !== undefined && { extensions: { retryAfterSeconds } }),
    ...(code === 'UNAUTHENTICATED' && { upstream: { status: 401, code: 'auth.invalid_key' } }),
  });
};

const GRAPHQL_RESPONSE_JSON = 'application/graphql-response+json';

function gateway(outcomes: { a: Outcome; b: Outcome }) {
  const events: Outcome[] = [];
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: `
        type Query { a: String b: String }
        type Subscription { watched: String refused: String }
      `,
      resolvers: {
        Query: { a: () => failure(outcomes.a, 'a'), b: () => failure(outcomes.b, 'b') },
        Subscription: {
          watched: {
            async *subscribe() {
              for (const event of events) yield event;
            },
            resolve: (event: Outcome) => failure(event, 'watched'),
          },
          refused: {
            // The first read, before the stream begins, finds the key refused.
            subscribe: () => failure({ code: 'UNAUTHENTICATED' }, 'refused'),
          },
        },
      },
    }),
    logging: false,
    // The plugin reads only the request of its context, which Yoga gives every context.
    plugins: [useOperationStatus() as Plugin],
  });
  const post = async (query: string, accept = GRAPHQL_RESPONSE_JSON) => {
    const response = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept },
      body: JSON.stringify({ query }),
    });
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: await response.json(),
    };
  };
  const subscribe = async (stream: Outcome[], query = 'subscription { watched }') => {
    events.splice(0, events.length, ...stream);
    const response = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query }),
    });
    const text = await response.text();
    return [...text.matchAll(/^data: (.+)$/gm)].map((m) => JSON.parse(m[1] as string));
  };
  return { post, subscribe };
}

const ALL = '{ a b }';

describe('useOperationStatus', () => {
  it('keeps 200 with partial data, whatever the errors', async () => {
    for (const code of ['RATE_LIMITED', 'UPSTREAM_TIMEOUT', 'FORBIDDEN'] as const) {
      const { status, body } = await gateway({ a: 'ok', b: { code, retryAfterSeconds: 3 } }).post(ALL);
      expect(status, code).toBe(200);
      expect(body.data).toEqual({ a: 'a', b: null });
    }
  });

  it('answers a key the REST API refused as a missing key is: 401, data null, one UNAUTHENTICATED error without a path', async () => {
    for (const accept of [GRAPHQL_RESPONSE_JSON, 'application/json']) {
      const { status, body } = await gateway({ a: 'ok', b: { code: 'UNAUTHENTICATED' } }).post(ALL, accept);
      expect(status, accept).toBe(401);
      expect(body).toEqual({
        data: null,
        errors: [
          {
            message: 'b failed with UNAUTHENTICATED',
            extensions: { code: 'UNAUTHENTICATED', upstream: { status: 401, code: 'auth.invalid_key' } },
          },
        ],
      });
    }
  });

  it('answers 403 for every client when every root field failed with FORBIDDEN', async () => {
    const g = gateway({ a: { code: 'FORBIDDEN' }, b: { code: 'FORBIDDEN' } });
    expect((await g.post(ALL, 'application/json')).status).toBe(403);
    expect((await g.post(ALL)).status).toBe(403);
    const mixed = await gateway({ a: { code: 'FORBIDDEN' }, b: { code: 'UPSTREAM_ERROR' } }).post(ALL);
    expect(mixed.status).toBe(403);
    expect(mixed.body.data).toEqual({ a: null, b: null });
  });

  it('answers 429 with the longest Retry-After when every root field was rate limited, for application/graphql-response+json', async () => {
    const g = gateway({
      a: { code: 'RATE_LIMITED', retryAfterSeconds: 2 },
      b: { code: 'RATE_LIMITED', retryAfterSeconds: 7 },
    });
    const { status, retryAfter, body } = await g.post(ALL);
    expect(status).toBe(429);
    expect(retryAfter).toBe('7');
    expect(body.data).toEqual({ a: null, b: null });
    expect(body.errors.map((e: { extensions: unknown }) => e.extensions)).toEqual([
      { code: 'RATE_LIMITED', retryAfterSeconds: 2 },
      { code: 'RATE_LIMITED', retryAfterSeconds: 7 },
    ]);
  });

  it('keeps 200 for application/json and wildcards, as GraphQL over HTTP requires', async () => {
    const g = gateway({ a: { code: 'RATE_LIMITED', retryAfterSeconds: 2 }, b: { code: 'RATE_LIMITED' } });
    for (const accept of [
      'application/json',
      '*/*',
      'application/*',
      `application/json, ${GRAPHQL_RESPONSE_JSON}`,
    ]) {
      const { status, retryAfter } = await g.post(ALL, accept);
      expect(status, accept).toBe(200);
      expect(retryAfter).toBeNull();
    }
  });

  it('answers 504 when every root field timed out, 503 when all were unavailable or timed out', async () => {
    const timeout = { code: 'UPSTREAM_TIMEOUT' } as const;
    const unavailable = { code: 'UPSTREAM_UNAVAILABLE' } as const;
    expect((await gateway({ a: timeout, b: timeout }).post(ALL)).status).toBe(504);
    expect((await gateway({ a: unavailable, b: timeout }).post(ALL)).status).toBe(503);
    expect((await gateway({ a: unavailable, b: unavailable }).post(ALL)).status).toBe(503);
    // An open circuit knows when to come back.
    const open = await gateway({
      a: { code: 'UPSTREAM_UNAVAILABLE', retryAfterSeconds: 5 },
      b: unavailable,
    }).post(ALL);
    expect([open.status, open.retryAfter]).toEqual([503, '5']);
  });

  it('leaves the status alone when the failed fields disagree, or a code brings no status', async () => {
    const rateLimited = { code: 'RATE_LIMITED', retryAfterSeconds: 2 } as const;
    const mixed = await gateway({ a: rateLimited, b: { code: 'UPSTREAM_UNAVAILABLE' } }).post(ALL);
    expect([mixed.status, mixed.retryAfter]).toEqual([200, null]);
    const fieldCodes = await gateway({ a: rateLimited, b: { code: 'UPSTREAM_ERROR' } }).post(ALL);
    expect([fieldCodes.status, fieldCodes.retryAfter]).toEqual([200, null]);
  });

  it('gives each event of a stream refused for its key the body of a refused request', async () => {
    const events = await gateway({ a: 'ok', b: 'ok' }).subscribe(['ok', { code: 'UNAUTHENTICATED' }]);
    expect(events).toEqual([
      { data: { watched: 'watched' } },
      {
        data: null,
        errors: [
          {
            message: 'watched failed with UNAUTHENTICATED',
            extensions: { code: 'UNAUTHENTICATED', upstream: { status: 401, code: 'auth.invalid_key' } },
          },
        ],
      },
    ]);
  });

  it('answers a subscription refused for its key before its stream began with the same one result', async () => {
    const events = await gateway({ a: 'ok', b: 'ok' }).subscribe([], 'subscription { refused }');
    expect(events).toEqual([
      {
        data: null,
        errors: [
          {
            message: 'refused failed with UNAUTHENTICATED',
            extensions: { code: 'UNAUTHENTICATED', upstream: { status: 401, code: 'auth.invalid_key' } },
          },
        ],
      },
    ]);
  });

  it('leaves other errors of a stream as they are', async () => {
    const [event] = await gateway({ a: 'ok', b: 'ok' }).subscribe([{ code: 'UPSTREAM_UNAVAILABLE' }]);
    expect(event).toMatchObject({ data: { watched: null }, errors: [{ path: ['watched'] }] });
  });
});

describe('answersGraphQLResponseJson', () => {
  const answers = (accept: string | null) =>
    answersGraphQLResponseJson(
      new Request('http://yoga/graphql', accept === null ? {} : { headers: { accept } }),
    );

  it('is decided by the first entry of Accept a JSON result can take', () => {
    expect(answers(GRAPHQL_RESPONSE_JSON)).toBe(true);
    expect(answers(`text/html, ${GRAPHQL_RESPONSE_JSON};q=0.9, application/json`)).toBe(true);
    expect(answers(`Application/GraphQL-Response+JSON; charset=utf-8`)).toBe(true);
    expect(answers(`application/json, ${GRAPHQL_RESPONSE_JSON}`)).toBe(false);
    expect(answers(`*/*, ${GRAPHQL_RESPONSE_JSON}`)).toBe(false);
    expect(answers(null)).toBe(false);
    expect(answers('text/html')).toBe(false);
  });

  it('skips an entry with a charset Yoga does not answer in', () => {
    expect(answers(`${GRAPHQL_RESPONSE_JSON}; charset=latin1, application/json`)).toBe(false);
    expect(answers(`application/json; charset=latin1, ${GRAPHQL_RESPONSE_JSON}`)).toBe(true);
  });
});
