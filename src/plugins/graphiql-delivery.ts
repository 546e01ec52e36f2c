import { createHash } from 'node:crypto';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';

/** Makes GraphiQL 5's tabs wrap instead of scrolling out of sight (docs/delivery.md#the-graphiql-page). */
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

export interface GraphiQLDeliveryOptions {
  /** The GraphQL endpoint, where the page is served: `/graphql`. */
  endpoint: string;
  /** GraphiQL's own options: title, first query, headers, tabs. */
  graphiql: GraphiQLOptions;
  /** Builds the page's HTML. @default Yoga's GraphiQL, loaded on the first visit */
  render?: (options: GraphiQLOptions) => string | Promise<string>;
}

/**
 * GraphiQL at `endpoint` for a GET accepting HTML, and `GET /` redirected there: the page is built
 * once per process on the first visit, with TAB_BAR_STYLE, each compressed form when first asked
 * for, an ETag (a reload is a 304), `Cache-Control: private` (docs/delivery.md#the-graphiql-page).
 */
export function useGraphiQLDelivery({
  endpoint,
  graphiql: options,
  render = renderOnFirstVisit,
}: GraphiQLDeliveryOptions): Plugin {
  let page: Promise<Page> | undefined;
  const built = (): Promise<Page> => {
    page ??= Promise.resolve(render(options)).then((rendered) => {
      // The first </head> is the page's own (its inline scripts mention the string later).
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

/** Yoga's GraphiQL renderer, loaded on the first visit only: its module holds ~30 MB of strings. */
async function renderOnFirstVisit(options: GraphiQLOptions): Promise<string> {
  const { renderGraphiQL } = await import('@graphql-yoga/render-graphiql');
  return renderGraphiQL(options);
}

/** The page's answer, in Yoga's Response class, so concurrent visits share one copy of the bytes. */
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
