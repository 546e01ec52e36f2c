import type { Plugin } from 'graphql-yoga';

/** A probe's bounds (cachedCheck). */
export interface ProbeBounds {
  /** How long a probe waits for a check under way before answering the previous one's. @default 800 */
  answerMs: number;
  /** Past this a check counts as failed. @default 5000 */
  checkTimeoutMs: number;
  /** How long an answer is reused, so a flood of probes makes one check per interval. @default 1000 */
  cacheMs: number;
}

/** The dependencies /readyz checks; each resolves true when it answers. */
export interface HealthChecks {
  /** The REST API: an answer below 500 counts (a keyless probe's 401 proves it up). */
  upstream: () => Promise<boolean>;
  idempotencyStore: () => Promise<boolean>;
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

export interface HealthChecksOptions {
  /** What /readyz asks. */
  checks: HealthChecks;
  /** What /readyz says besides its checks. */
  readiness: Readiness;
  /** How long /readyz and each check may take, and how long an answer is reused. @default PROBE_BOUNDS */
  bounds?: ProbeBounds;
}

/**
 * GET /healthz: alive. GET /readyz, within `answerMs` whatever a dependency does: 200 when the REST
 * API answers, else 503, with the store's state (unreachable leaves it ready), `store` and
 * `version`; 503 at once when shutting down (docs/configuration.md#health-and-readiness).
 */
export function useHealthChecks({ checks, readiness, bounds = PROBE_BOUNDS }: HealthChecksOptions): Plugin {
  const json = (status: number, body: object) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const upstream = cachedCheck(checks.upstream, bounds);
  const store = cachedCheck(checks.idempotencyStore, bounds);
  return {
    // Synchronous for every other path: runs on every request.
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
 * `check`, single-flight, its answer reused for `cacheMs`. A caller waits at most `answerMs`, then
 * gets the previous check's answer (false before the first); a check that throws or outlasts
 * `checkTimeoutMs` fails. So a slow dependency keeps the gateway ready; a silent one does not.
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
