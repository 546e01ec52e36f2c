import type { Plugin } from 'graphql-yoga';
import type { Scrape } from '../observability/metrics.ts';

/**
 * GET /metrics in the Prometheus text format on the gateway's port (METRICS_PORT serves it apart);
 * `scrape` is this process's registry, or the fleet's sums under WORKERS > 1.
 */
export function useMetricsEndpoint(scrape: Scrape): Plugin {
  return {
    onRequest({ request, url, endResponse }) {
      if (url.pathname !== '/metrics') return;
      if (request.method !== 'GET') {
        endResponse(new Response(null, { status: 405, headers: { allow: 'GET' } }));
        return;
      }
      return scrape().then(
        ({ contentType, body }) =>
          endResponse(new Response(body, { status: 200, headers: { 'content-type': contentType } })),
        () => endResponse(new Response('metrics unavailable\n', { status: 503 })),
      );
    },
  };
}
