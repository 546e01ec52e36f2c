import { hash } from 'node:crypto';
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { addVary } from '../shared/vary.ts';

/** A body's text and its entity tag, kept beside the result that was serialised to it. */
interface Tagged {
  text: string;
  etag: string;
}

const JSON_TYPES = /^application\/(json|graphql-response\+json)\b/i;

/**
 * Conditional GETs on the GraphQL endpoint (RFC 9110, 13.1.2; docs/delivery.md#conditional-gets):
 * a 200 JSON answer to a GET carries a weak ETag of its uncompressed body, `Cache-Control:
 * private, no-cache` and `Vary: Authorization, Accept, Accept-Encoding`, and a matching
 * If-None-Match gets a 304 without a body; other GET answers get `no-store`; POSTs and streams
 * are left alone. A result shared by query deduplication is hashed once. Runs before useCompression.
 */
export function useConditionalGet(graphqlEndpoint: string): Plugin {
  /** The result each request was answered with, to find its tag. */
  const resultOf = new WeakMap<Request, object>();
  const tags = new WeakMap<object, Tagged>();
  return {
    onResultProcess({ request, result }) {
      if (request.method === 'GET' && !Array.isArray(result) && !(Symbol.asyncIterator in result)) {
        resultOf.set(request, result as ExecutionResult);
      }
    },
    async onResponse({ request, response, setResponse, fetchAPI }) {
      if (request.method !== 'GET' || new URL(request.url).pathname !== graphqlEndpoint) return;
      // Every GET answer depends on the key and on Accept, streams and refusals included.
      addVary(response.headers, 'Authorization', 'Accept');
      const type = response.headers.get('content-type') ?? '';
      if (!JSON_TYPES.test(type) || response.headers.has('content-encoding')) return;
      if (response.status !== 200) {
        response.headers.set('cache-control', 'no-store');
        return;
      }
      const text = await response.text();
      const etag = tagOf(text, resultOf.get(request), tags);
      const headers = response.headers;
      headers.set('etag', etag);
      headers.set('cache-control', 'private, no-cache');
      addVary(headers, 'Authorization', 'Accept', 'Accept-Encoding');
      if (matches(request.headers.get('if-none-match'), etag)) {
        const notModified = new fetchAPI.Headers();
        for (const name of ['etag', 'cache-control', 'vary'])
          notModified.set(name, headers.get(name) as string);
        setResponse(new fetchAPI.Response(null, { status: 304, headers: notModified }));
      } else if (response.bodyUsed) {
        // Not Yoga's own string body (read without being used up): answer the text just read.
        setResponse(new fetchAPI.Response(text, { status: 200, statusText: response.statusText, headers }));
      }
    },
  };
}

function tagOf(text: string, result: object | undefined, tags: WeakMap<object, Tagged>): string {
  const kept = result && tags.get(result);
  // The result's own text again (usually one and the same string): its tag.
  if (kept && kept.text === text) return kept.etag;
  const etag = `W/"${hash('sha1', text, 'base64url')}"`;
  if (result) tags.set(result, { text, etag });
  return etag;
}

/**
 * Whether If-None-Match matches `etag` by weak comparison (RFC 9110, 13.1.2): `*`, or a listed
 * tag whose opaque part equals its, `W/` or not.
 */
export function matches(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const opaque = etag.replace(/^W\//, '');
  for (const candidate of ifNoneMatch.split(',')) {
    const tag = candidate.trim();
    if (tag === '*' || tag.replace(/^W\//i, '') === opaque) return true;
  }
  return false;
}
