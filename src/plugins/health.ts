import type { Plugin } from 'graphql-yoga';

/**
 * GET /healthz: the process is alive. GET /readyz: the REST API answers (any HTTP answer counts:
 * a 401 to a keyless probe proves it is up and speaking HTTP).
 */
export function useHealthChecks(isReady: () => Promise<boolean>): Plugin {
  const json = (status: number, body: object) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  return {
    // Synchronous for every other path: this runs on every request.
    onRequest({ url, endResponse }) {
      if (url.pathname === '/healthz') endResponse(json(200, { status: 'ok' }));
      else if (url.pathname === '/readyz') {
        return isReady()
          .catch(() => false)
          .then((ready) =>
            endResponse(json(ready ? 200 : 503, { status: ready ? 'ready' : 'upstream unreachable' })),
          );
      }
    },
  };
}
