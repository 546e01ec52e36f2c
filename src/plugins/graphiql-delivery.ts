import { createHash } from 'node:crypto';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';

/** The page as sent: its bytes and ETag, and each compressed form once asked for. */
interface Page {
  bytes: Uint8Array<ArrayBuffer>;
  etag: string;
  br?: Uint8Array<ArrayBuffer>;
  gzip?: Uint8Array<ArrayBuffer>;
}

/**
 * How browsers get GraphiQL. The page carries its assets inline (no CDN: it must work offline), so
 * it is about 9 MB. It is built once per process, on the first visit: its bytes, its ETag, and each
 * compressed form (brotli or gzip) when first asked for. A visit then costs no rendering, hashing or
 * copying, compressed or not; a reload costs a 304 (ETag, short private cache lifetime). Private:
 * in sandbox mode the page holds the demo key. `GET /` sends people to it.
 *
 * This replaces Yoga's own GraphiQL plugin, which renders the page again for every visit.
 */
export function useGraphiQLDelivery(
  endpoint: string,
  options: GraphiQLOptions,
  render: (options: GraphiQLOptions) => string = renderGraphiQL,
): Plugin {
  let page: Page | undefined;
  const built = (): Page => {
    if (!page) {
      const bytes = new TextEncoder().encode(render(options));
      page = { bytes, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 32)}"` };
    }
    return page;
  };
  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return;
      if (url.pathname === '/') {
        endResponse(new Response(null, { status: 302, headers: { location: endpoint } }));
      } else if (
        (url.pathname === endpoint || url.pathname === `${endpoint}/`) &&
        request.method === 'GET' &&
        request.headers.get('accept')?.includes('text/html')
      ) {
        endResponse(deliver(request, built(), fetchAPI.Response));
      }
    },
  };
}

/**
 * The page's answer, in Yoga's own Response class: the Node adapter writes its bytes to the socket
 * as they are, so concurrent visits share one copy (the platform's Response copies a Uint8Array
 * body, 9 MB per visit in flight).
 */
function deliver(request: Request, page: Page, Response: typeof globalThis.Response): Response {
  const headers = new Headers({
    'content-type': 'text/html; charset=utf-8',
    etag: page.etag,
    'cache-control': 'private, max-age=300',
    vary: 'accept-encoding',
  });
  if (request.headers.get('if-none-match') === page.etag) return new Response(null, { status: 304, headers });
  const accepted = request.headers.get('accept-encoding') ?? '';
  let body = page.bytes;
  if (/\bbr\b/.test(accepted)) {
    page.br ??= new Uint8Array(
      brotliCompressSync(page.bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }),
    );
    body = page.br;
    headers.set('content-encoding', 'br');
  } else if (/\bgzip\b/.test(accepted)) {
    page.gzip ??= new Uint8Array(gzipSync(page.bytes));
    body = page.gzip;
    headers.set('content-encoding', 'gzip');
  }
  return new Response(body, { status: 200, headers });
}
