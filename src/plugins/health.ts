import type { Plugin } from 'graphql-yoga';

/** A probe's bounds: how long one check may run, and how long its answer is reused. */
export interface ProbeBounds {
  /** Past this a check counts as failed; well under the 1 s a probe must answer within. */
  timeoutMs: number;
  /** An answer is reused this long, so a flood of probes makes one check per interval. */
  cacheMs: number;
}

export const PROBE_BOUNDS: ProbeBounds = { timeoutMs: 800, cacheMs: 1_000 };

/**
 * GET /healthz: the process is alive (answered at once, from nothing). GET /readyz: the REST API
 * answers (any HTTP answer counts: a 401 to a keyless probe proves it is up and speaking HTTP),
 * and how the idempotency store is.
 *
 * Each check has its own timeout and is single-flight with a short cache: however many probes
 * arrive and whatever a dependency does (a Redis that hangs, a REST API that stalls), /readyz
 * answers within `timeoutMs`, and makes at most one check of each dependency per `cacheMs`.
 *
 * An unreachable store leaves the gateway ready: reads work without it, and withdrawals are
 * refused unsent until it is back (IDEMPOTENCY_UNAVAILABLE), so taking every replica out of the
 * load balancer would only turn that into a full outage.
 */
export function useHealthChecks(
  checks: { upstream: () => Promise<boolean>; idempotencyStore: () => Promise<boolean> },
  bounds: ProbeBounds = PROBE_BOUNDS,
): Plugin {
  const json = (status: number, body: object) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const upstream = cachedCheck(checks.upstream, bounds);
  const store = cachedCheck(checks.idempotencyStore, bounds);
  return {
    // Synchronous for every other path: this runs on every request.
    onRequest({ url, endResponse }) {
      if (url.pathname === '/healthz') endResponse(json(200, { status: 'ok' }));
      else if (url.pathname === '/readyz') {
        return Promise.all([upstream(), store()]).then(([upstreamOk, storeOk]) =>
          endResponse(
            json(upstreamOk ? 200 : 503, {
              status: upstreamOk ? 'ready' : 'upstream unreachable',
              upstream: upstreamOk ? 'ok' : 'unreachable',
              idempotencyStore: storeOk ? 'ok' : 'unreachable',
            }),
          ),
        );
      }
    },
  };
}

/**
 * `check`, bounded by `timeoutMs` (a check that does not finish by then counts as false, and is
 * left to finish on its own), shared by every caller while it runs, and its answer reused for
 * `cacheMs` after it settles.
 */
export function cachedCheck(check: () => Promise<boolean>, bounds: ProbeBounds): () => Promise<boolean> {
  let running: Promise<boolean> | null = null;
  let answer: { ok: boolean; at: number } | null = null;
  return () => {
    if (answer && Date.now() - answer.at < bounds.cacheMs) return Promise.resolve(answer.ok);
    if (running) return running;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), bounds.timeoutMs);
    });
    const attempt = Promise.resolve()
      .then(check)
      .catch(() => false);
    running = Promise.race([attempt, timedOut]).then((ok) => {
      clearTimeout(timer);
      answer = { ok, at: Date.now() };
      running = null;
      return ok;
    });
    return running;
  };
}
