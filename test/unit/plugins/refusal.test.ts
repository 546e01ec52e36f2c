import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { refusal, refusalCodeOf } from '../../../src/plugins/refusal.ts';

const error = { message: 'Too many requests.', extensions: { code: 'RATE_LIMITED', retryAfterSeconds: 3 } };

describe('refusal', () => {
  it('answers {"errors":[error]} as JSON with the status, its reason phrase and the headers given', async () => {
    const request = new Request('http://yoga/graphql');
    const response = refusal(request, 429, error, { 'retry-after': '3' });
    expect(response.status).toBe(429);
    expect(response.statusText).toBe('Too Many Requests');
    expect(Object.fromEntries(response.headers)).toEqual({
      'content-type': 'application/json; charset=utf-8',
      'retry-after': '3',
    });
    expect(await response.json()).toEqual({ errors: [error] });
  });

  it('gives a status Node has no phrase for an empty one', () => {
    expect(refusal(new Request('http://yoga/'), 599, error).statusText).toBe('');
  });

  it("keeps the refusal's code for its own request only", () => {
    const refused = new Request('http://yoga/graphql');
    const other = new Request('http://yoga/graphql');
    refusal(refused, 413, { message: 'Too large.', extensions: { code: 'REQUEST_TOO_LARGE' } });
    expect(refusalCodeOf(refused)).toBe('REQUEST_TOO_LARGE');
    expect(refusalCodeOf(other)).toBeUndefined();
  });

  it('is what a plugin ending a request in onRequest sends, and its code is known to every onResponse after', async () => {
    const seen: (string | undefined)[] = [];
    const refuseAll: Plugin = {
      onRequest({ request, endResponse }) {
        if (new URL(request.url).searchParams.has('refuse')) endResponse(refusal(request, 429, error));
      },
    };
    const observer: Plugin = {
      onResponse({ request }) {
        seen.push(refusalCodeOf(request));
      },
    };
    const yoga = createYoga({
      schema: createSchema({
        typeDefs: 'type Query { greeting: String! }',
        resolvers: { Query: { greeting: () => 'hi' } },
      }),
      logging: false,
      // The observer first, as request telemetry is: it sees the requests the plugins after it refuse.
      plugins: [observer, refuseAll],
    });
    const refused = await yoga.fetch('http://yoga/graphql?query=%7Bgreeting%7D&refuse');
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ errors: [error] });
    const answered = await yoga.fetch('http://yoga/graphql?query=%7Bgreeting%7D');
    expect(await answered.json()).toEqual({ data: { greeting: 'hi' } });
    expect(seen).toEqual(['RATE_LIMITED', undefined]);
  });
});
