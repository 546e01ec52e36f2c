import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useMaxRequestBytes } from '../../../src/plugins/max-request-bytes.ts';
import { refusalCodeOf } from '../../../src/plugins/refusal.ts';

const MAX = 100;

function gateway() {
  let executed = 0;
  const codes: (string | undefined)[] = [];
  const telemetry: Plugin = {
    onResponse({ request }) {
      codes.push(refusalCodeOf(request));
    },
  };
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: 'type Query { echo(text: String!): String! }',
      resolvers: {
        Query: {
          echo: (_root, { text }: { text: string }) => {
            executed++;
            return text;
          },
        },
      },
    }),
    logging: false,
    // As yoga.ts: Yoga's own limit is off, this plugin enforces the bound.
    maxRequestBodySize: false,
    plugins: [telemetry, useMaxRequestBytes(MAX)],
  });
  return { fetch: yoga.fetch, executed: () => executed, codes };
}

/** A body of exactly `bytes` bytes (ASCII) asking for an echo. */
function bodyOf(bytes: number): string {
  const empty = JSON.stringify({ query: 'query($t: String!) { echo(text: $t) }', variables: { t: '' } });
  return JSON.stringify({
    query: 'query($t: String!) { echo(text: $t) }',
    variables: { t: 'x'.repeat(bytes - empty.length) },
  });
}

/** A body without Content-Length, delivered in chunks; `cancelled` tells whether reading it stopped early. */
function chunked(chunks: string[]) {
  const encoder = new TextEncoder();
  let sent = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const chunk = chunks[sent++];
        if (chunk === undefined) controller.close();
        else controller.enqueue(encoder.encode(chunk));
      },
      cancel() {
        cancelled = true;
      },
      // Nothing is pulled before someone reads.
    },
    { highWaterMark: 0 },
  );
  return { stream, sent: () => sent, cancelled: () => cancelled };
}

const post = (body: BodyInit, headers: Record<string, string> = {}) =>
  new Request('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    duplex: 'half',
  } as RequestInit);

describe('useMaxRequestBytes', () => {
  it('refuses a Content-Length over the bound with 413 REQUEST_TOO_LARGE and Connection: close, before anything runs', async () => {
    const g = gateway();
    const response = await g.fetch(post(bodyOf(MAX + 1), { 'content-length': String(MAX + 1) }));
    expect(response.status).toBe(413);
    expect(response.headers.get('connection')).toBe('close');
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toEqual({
      errors: [
        {
          message: `Request bodies are limited to ${MAX} bytes; received ${MAX + 1}.`,
          extensions: { code: 'REQUEST_TOO_LARGE' },
        },
      ],
    });
    expect(g.executed()).toBe(0);
    expect(g.codes).toEqual(['REQUEST_TOO_LARGE']);
  });

  it('refuses by Content-Length alone, without reading the body', async () => {
    const g = gateway();
    const body = chunked(['{"query":"{ echo(text: \\"a\\") }"}']);
    const response = await g.fetch(post(body.stream, { 'content-length': '1000000' }));
    expect(response.status).toBe(413);
    expect(body.sent()).toBe(0);
  });

  it('answers a body of exactly the bound', async () => {
    const g = gateway();
    const body = bodyOf(MAX);
    expect(body.length).toBe(MAX);
    const response = await g.fetch(post(body, { 'content-length': String(MAX) }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { echo: JSON.parse(body).variables.t } });
  });

  it('refuses a chunked body once it goes past the bound, and stops reading it', async () => {
    const g = gateway();
    // Far more than the bound, in chunks of 40 bytes: reading must stop at the third.
    const body = chunked(Array.from({ length: 1000 }, () => 'x'.repeat(40)));
    const response = await g.fetch(post(body.stream));
    expect(response.status).toBe(413);
    expect(response.headers.get('connection')).toBe('close');
    expect(await response.json()).toEqual({
      errors: [
        {
          message: `Request bodies are limited to ${MAX} bytes; the chunked body went past it.`,
          extensions: { code: 'REQUEST_TOO_LARGE' },
        },
      ],
    });
    expect(body.sent()).toBe(3);
    expect(body.cancelled()).toBe(true);
    expect(g.executed()).toBe(0);
  });

  it('answers a chunked body within the bound, its chunks put back together', async () => {
    const g = gateway();
    const text = bodyOf(MAX);
    const body = chunked([text.slice(0, 7), text.slice(7, 50), text.slice(50)]);
    const response = await g.fetch(post(body.stream));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { echo: JSON.parse(text).variables.t } });
    expect(g.codes).toEqual([undefined]);
  });

  it('leaves requests without a body alone', async () => {
    const g = gateway();
    const long = 'x'.repeat(MAX * 2);
    const response = await g.fetch(
      `http://yoga/graphql?query=${encodeURIComponent(`{ echo(text: "${long}") }`)}`,
    );
    expect(await response.json()).toEqual({ data: { echo: long } });
  });
});
