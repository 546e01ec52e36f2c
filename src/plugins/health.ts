import type { Plugin } from 'graphql-yoga';

/**
 * GET /healthz: the process is alive. GET /readyz: the REST API answers (any HTTP answer counts:
 * a 401 to a keyless probe proves it is up and speaking HTTP), and how the idempotency store is.
 * An unreachable store leaves the gateway ready: reads work without it, and withdrawals with an
 * idempotencyKey are refused unsent until it is back (IDEMPOTENCY_UNAVAILABLE), so taking every
 * replica out of the load balancer would only turn that into a full outage.
 */
export function useHealthChecks(checks: {
  upstream: () => Promise<boolean>;
  idempotencyStore: () => Promise<boolean>;
}): Plugin {
  const json = (status: number, body: object) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const probe = (check: () => Promise<boolean>) => check().catch(() => false);
  return {
    // Synchronous for every other path: this runs on every request.
    onRequest({ url, endResponse }) {
      if (url.pathname === '/healthz') endResponse(json(200, { status: 'ok' }));
      else if (url.pathname === '/readyz') {
        return Promise.all([probe(checks.upstream), probe(checks.idempotencyStore)]).then(
          ([upstream, store]) =>
            endResponse(
              json(upstream ? 200 : 503, {
                status: upstream ? 'ready' : 'upstream unreachable',
                upstream: upstream ? 'ok' : 'unreachable',
                idempotencyStore: store ? 'ok' : 'unreachable',
              }),
            ),
        );
      }
    },
  };
}
