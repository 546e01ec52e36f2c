import { createHash } from 'node:crypto';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Plugin } from 'graphql-yoga';

/**
 * How browsers get GraphiQL. The page carries its assets inline (no CDN: it must work offline), so
 * it is about 9 MB: it is sent compressed (brotli or gzip, compressed once and kept while the page
 * stays the same) with an ETag and a short private cache lifetime, so a reload costs a 304. Private:
 * in sandbox mode the page holds the demo key. `GET /` sends people to it.
 */
export function useGraphiQLDelivery(endpoint: string): Plugin {
  let page:
    | { text: string; etag: string; br?: Uint8Array<ArrayBuffer>; gzip?: Uint8Array<ArrayBuffer> }
    | undefined;
  return {
    onRequest({ request, url, endResponse }) {
      if (url.pathname === '/' && (request.method === 'GET' || request.method === 'HEAD')) {
        endResponse(new Response(null, { status: 302, headers: { location: endpoint } }));
      }
    },
    // Not async: every response passes here, and only GraphiQL's page needs to wait for its body.
    onResponse({ request, response, setResponse }) {
      if (request.method !== 'GET' || !response.headers.get('content-type')?.startsWith('text/html')) return;
      return response.text().then((text) => deliver(request, response, text, setResponse));
    },
  };

  function deliver(request: Request, response: Response, text: string, setResponse: (r: Response) => void) {
    if (page?.text !== text) {
      page = { text, etag: `"${createHash('sha256').update(text).digest('base64url').slice(0, 32)}"` };
    }
    const headers = new Headers(response.headers);
    headers.set('etag', page.etag);
    headers.set('cache-control', 'private, max-age=300');
    headers.set('vary', 'accept-encoding');
    headers.delete('content-length');
    if (request.headers.get('if-none-match') === page.etag) {
      setResponse(new Response(null, { status: 304, headers }));
      return;
    }
    const accepted = request.headers.get('accept-encoding') ?? '';
    let body: string | Uint8Array<ArrayBuffer> = text;
    if (/\bbr\b/.test(accepted)) {
      page.br ??= new Uint8Array(
        brotliCompressSync(text, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }),
      );
      body = page.br;
      headers.set('content-encoding', 'br');
    } else if (/\bgzip\b/.test(accepted)) {
      page.gzip ??= new Uint8Array(gzipSync(text));
      body = page.gzip;
      headers.set('content-encoding', 'gzip');
    }
    setResponse(new Response(body, { status: response.status, headers }));
  }
}
