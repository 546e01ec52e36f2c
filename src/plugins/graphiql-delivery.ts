import { createHash } from 'node:crypto';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';

/**
 * GraphiQL 5 keeps its tabs on one line and scrolls the overflow with its scrollbar hidden, so at
 * 1280 px only 7 of the 9 example tabs show and nothing says more exist. Here they wrap instead,
 * the header growing a row (two rows at 1024 to 1280 px, three at 800).
 */
export const TAB_BAR_STYLE =
  '<style>.graphiql-container .graphiql-session-header{height:auto;min-height:var(--session-header-height)}' +
  '.graphiql-session-header .graphiql-tabs{flex-wrap:wrap}</style>';

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
 * This replaces Yoga's own GraphiQL plugin, which renders the page again for every visit. The page
 * gets one addition, TAB_BAR_STYLE.
 */
export function useGraphiQLDelivery(
  endpoint: string,
  options: GraphiQLOptions,
  render: (options: GraphiQLOptions) => string | Promise<string> = renderOnFirstVisit,
): Plugin {
  let page: Promise<Page> | undefined;
  const built = (): Promise<Page> => {
    page ??= Promise.resolve(render(options)).then((rendered) => {
      // The first </head> is the page's own (the inline scripts mention the string later).
      const html = rendered.replace('</head>', `${TAB_BAR_STYLE}</head>`);
      const bytes = new TextEncoder().encode(html);
      return { bytes, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 32)}"` };
    });
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
        return built().then((ready) => endResponse(deliver(request, ready, fetchAPI.Response)));
      }
    },
  };
}

/**
 * Yoga's GraphiQL renderer, loaded on the first visit: its module holds GraphiQL's assets as
 * strings (about 30 MB of heap), which a process that never serves the page (GRAPHIQL=false, as in
 * production) should not carry.
 */
async function renderOnFirstVisit(options: GraphiQLOptions): Promise<string> {
  const { renderGraphiQL } = await import('@graphql-yoga/render-graphiql');
  return renderGraphiQL(options);
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
