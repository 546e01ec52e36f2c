import type { Plugin } from 'graphql-yoga';

/** A probe's bounds: how long it waits for a check, how long a check may run, and how long an answer is reused. */
export interface ProbeBounds {
  /** How long a probe waits for a check under way; past it, it answers what the previous check found. */
  answerMs: number;
  /** Past this a check counts as failed: the dependency does not answer at all. */
  checkTimeoutMs: number;
  /** An answer is reused this long, so a flood of probes makes one check per interval. */
  cacheMs: number;
}

export const PROBE_BOUNDS: ProbeBounds = { answerMs: 800, checkTimeoutMs: 5_000, cacheMs: 1_000 };

/** What /readyz says besides its checks. */
export interface Readiness {
  /** This process's release (package.json's version). */
  release: string;
  /** Where the fleet's shared state is kept, in words (storeDescription in redis/connection.ts). */
  store: string;
  /** True once the process is shutting down (GatewayRuntime.beginShutdown). */
  shuttingDown(): boolean;
}

/**
 * GET /healthz: the process is alive (answered at once, from nothing). GET /readyz: the REST API
 * answers (any HTTP answer counts: a 401 to a keyless probe proves it is up and speaking HTTP),
 * how the idempotency store is, which store it is (`store`: in process, or which Redis), and this
 * process's release (`version`).
 *
 * Each check is single-flight with a short cache: however many probes arrive and whatever a
 * dependency does (a Redis that hangs, a REST API that stalls), /readyz answers within `answerMs`,
 * and makes at most one check of each dependency at a time, and one per `cacheMs` (cachedCheck).
 *
 * An unreachable store leaves the gateway ready: reads work without it, and withdrawals are
 * refused unsent until it is back (IDEMPOTENCY_UNAVAILABLE), so taking every replica out of the
 * load balancer would only turn that into a full outage.
 *
 * Once the process is shutting down, /readyz answers 503 at once, without checking anything,
 * while every other request is still served: load balancers stop sending before the listener
 * closes (SHUTDOWN_GRACE_MS).
 */
export function useHealthChecks(
  checks: { upstream: () => Promise<boolean>; idempotencyStore: () => Promise<boolean> },
  readiness: Readiness,
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
        if (readiness.shuttingDown()) {
          endResponse(
            json(503, { status: 'shutting down', store: readiness.store, version: readiness.release }),
          );
          return;
        }
        return Promise.all([upstream(), store()]).then(([upstreamOk, storeOk]) =>
          endResponse(
            json(upstreamOk ? 200 : 503, {
              status: upstreamOk ? 'ready' : 'upstream unreachable',
              upstream: upstreamOk ? 'ok' : 'unreachable',
              idempotencyStore: storeOk ? 'ok' : 'unreachable',
              store: readiness.store,
              version: readiness.release,
            }),
          ),
        );
      }
    },
  };
}

/**
 * `check`, shared by every caller while it runs and its answer reused for `cacheMs` after it
 * settles. A caller waits for a check under way at most `answerMs`, then gets what the previous
 * check found (false before the first one settles). A check counts as failed when it throws or has
 * not settled within `checkTimeoutMs`.
 *
 * So a dependency that answers slowly but answers keeps the gateway ready: taking every replica
 * out of the load balancer because the REST API takes 3 s would turn slow into down. One that does
 * not answer within `checkTimeoutMs`, or refuses, makes it not ready.
 */
export function cachedCheck(check: () => Promise<boolean>, bounds: ProbeBounds): () => Promise<boolean> {
  let running: Promise<boolean> | null = null;
  let answer: { ok: boolean; at: number } | null = null;
  const start = () => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), bounds.checkTimeoutMs);
    });
    const attempt = Promise.resolve()
      .then(check)
      .catch(() => false);
    return Promise.race([attempt, timedOut]).then((ok) => {
      clearTimeout(timer);
      answer = { ok, at: Date.now() };
      running = null;
      return ok;
    });
  };
  return () => {
    if (answer && Date.now() - answer.at < bounds.cacheMs) return Promise.resolve(answer.ok);
    running ??= start();
    let timer: NodeJS.Timeout | undefined;
    const previous = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(answer?.ok ?? false), bounds.answerMs);
    });
    return Promise.race([running, previous]).finally(() => clearTimeout(timer));
  };
}
