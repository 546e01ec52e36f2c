import { performance } from 'node:perf_hooks';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { Client, Pool } from 'undici';
import { GatewayError } from '../errors/errors.ts';
import {
  type Activity,
  BASE_PATH,
  routeLabels,
  type Stage,
  type UpstreamCall,
  type UpstreamObserver,
  type UpstreamResponse,
  type UpstreamTelemetry,
  type Wire,
} from './call.ts';
import type { Caller } from './caller.ts';
import { type CircuitBreakerOptions, CircuitBreakers, circuit } from './circuit-breakers.ts';
import { FairShare, type FairShareOptions } from './fair-share.ts';
import { type RetryOptions, retry } from './retry.ts';
import { failureKind } from './transport-errors.ts';
import { wire } from './wire.ts';

/**
 * How bytes reach the REST API: one undici Pool with keep-alive per process, explicit timeouts, the
 * GraphQL request's deadline on every call, and bounded, jittered retries for idempotent GETs.
 * A call passes these stages (each a Stage, call.ts), outermost first:
 *
 *   retry (GETs only) → fair share → budget → circuit → spend → observe → wire
 *
 * Every attempt, retries included, waits for a slot of its caller's share of the REST API
 * (fair-share.ts: a few calls per key in flight, a POST never waits), then passes the request's
 * call budget (`budget` below, Caller.calls) and the route's circuit breaker (circuit-breakers.ts)
 * before it leaves; the share comes first so that the budget and the spending of it are checked
 * and counted in one step, after any wait. One that leaves is counted against the budget
 * (`spend`), counted and traced (`observe`), and sent (wire.ts: the deadline, the caller's key,
 * `x-request-id` and `traceparent`). Retry is retry.ts. Nothing here knows a resource or an
 * envelope (client.ts and envelope.ts do).
 */

export interface TransportOptions extends RetryOptions {
  baseURL: string;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  connections: number;
  maxResponseBytes: number;
  circuitBreaker: CircuitBreakerOptions;
  /**
   * Each key's share of the REST API (fair-share.ts); default: CALLS_PER_KEY calls in flight per
   * key past each request's first FREE_CALLS_PER_REQUEST, no hook. `callsPerKey: 0` turns it off.
   */
  fairShare?: Partial<FairShareOptions>;
}

/**
 * Each key's share by default (fair-share.ts): past a request's first 5 calls, at most 2 calls of
 * a key's expensive requests in flight at once, chosen by `npm run bench -- --neighbour`
 * (docs/benchmark.md#a-noisy-neighbour); 2 keeps a screen's two scans in parallel.
 */
export const CALLS_PER_KEY = 2;

/**
 * Each key's pace by default (fair-share.ts): past its share in flight, a key's expensive calls go
 * at most 10 a second on average, 10 at once. Chosen by `npm run bench -- --neighbour`
 * (docs/benchmark.md).
 */
export const CALLS_PER_KEY_PER_SECOND = 10;

/** A GET's headers beyond the ones every call has (wire.ts): none. */
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

export class Transport {
  private readonly pool: Pool;
  /** The readiness probe's own connection (ping). */
  private readonly probe: Client;
  private readonly pathPrefix: string;
  private readonly breakers: CircuitBreakers;
  private readonly underWay: Activity = { calls: 0, timers: 0 };
  private readonly fairShare: FairShare;
  /** One attempt, through every stage but retry: a POST's only one. */
  private readonly sendOnce: Stage;
  /** A GET: its attempts, retried. */
  private readonly read: (call: UpstreamCall) => Promise<UpstreamResponse>;

  constructor(options: TransportOptions, telemetry: UpstreamTelemetry = {}) {
    const { observer } = telemetry;
    this.breakers = new CircuitBreakers(options.circuitBreaker);
    const url = new URL(options.baseURL);
    this.pathPrefix = url.pathname.replace(/\/$/, '') + BASE_PATH;
    this.pool = new Pool(url.origin, {
      connections: options.connections,
      connectTimeout: options.connectTimeoutMs,
      headersTimeout: options.headersTimeoutMs,
      bodyTimeout: options.bodyTimeoutMs,
      keepAliveTimeout: 30_000,
      maxResponseSize: options.maxResponseBytes,
    });
    this.probe = new Client(url.origin, {
      connectTimeout: options.connectTimeoutMs,
      headersTimeout: options.headersTimeoutMs,
      bodyTimeout: options.bodyTimeoutMs,
      keepAliveTimeout: 30_000,
      maxResponseSize: 64 * 1024,
    });
    const onTheWire = wire(this.pool, this.pathPrefix, this.underWay);
    this.fairShare = new FairShare({
      callsPerKey: CALLS_PER_KEY,
      callsPerSecond: CALLS_PER_KEY_PER_SECOND,
      ...options.fairShare,
    });
    this.sendOnce = this.fairShare.stage(
      this.underWay,
      budget(observer, circuit(this.breakers, observer, spend(observe(telemetry, url.host, onTheWire)))),
    );
    this.read = retry(options, this.underWay, this.sendOnce);
  }

  /**
   * One GET (`path` below the base path; `route` its template, e.g. `GET /deposits/{id}`) with
   * bounded, jittered retries on connection errors and 502/503/504, and a 429 waited out when its
   * Retry-After is short and fits the deadline. Returns the last answer, whatever its status;
   * throws a GatewayError when no answer came, the route's circuit is open, or the request's call
   * budget is spent.
   */
  get(caller: Caller, route: string, path: string): Promise<UpstreamResponse> {
    return this.read({
      method: 'GET',
      route: routeLabels(route),
      path,
      caller,
      headers: NO_HEADERS,
      body: undefined,
    });
  }

  /**
   * One POST, never retried: a second attempt could move money twice; it never waits for its key's
   * share either (fair-share.ts). Throws a GatewayError when it
   * was not sent (open circuit, spent budget), else the raw transport error when no answer came,
   * for the caller to decide what it means (see createWithdrawalIntent).
   */
  post(
    caller: Caller,
    route: string,
    path: string,
    headers: Record<string, string>,
    body: string,
  ): Promise<UpstreamResponse> {
    const json = { 'content-type': 'application/json', ...headers };
    return this.sendOnce({ method: 'POST', route: routeLabels(route), path, caller, headers: json, body }, 0);
  }

  circuits() {
    return this.breakers.states();
  }

  /**
   * Whether the REST API answers HTTP at all; a keyless probe gets a 401, which counts. It goes on
   * a connection of its own: a REST API that stalls probes cannot take the pool's connections from
   * real requests (and /readyz makes one probe at a time, plugins/health-checks.ts).
   */
  async ping(): Promise<boolean> {
    const response = await this.probe.request({ method: 'GET', path: `${this.pathPrefix}/wallets` });
    await response.body.dump();
    return response.statusCode < 500;
  }

  async close(): Promise<void> {
    // A probe under way is not waited for: its answer no longer matters.
    await Promise.all([this.pool.close(), this.probe.destroy()]);
  }

  /**
   * Calls under way, timers pending (deadlines, backoffs, waits for a share), calls waiting for
   * their key's share, and the pool's sockets and queue.
   */
  activity() {
    const { connected, free, pending, queued, running } = this.pool.stats;
    const { calls, timers } = this.underWay;
    return {
      calls,
      timers,
      waiting: this.fairShare.activity().waiting,
      pool: { connected, free, pending, queued, running },
    };
  }
}

/**
 * The request's call budget (Caller.calls, MAX_UPSTREAM_CALLS_PER_REQUEST), in two parts around
 * the circuit: `budget` refuses an attempt once the request has made as many calls as it may;
 * `spend` counts one that is about to leave. An attempt the circuit refuses never left, so it is
 * not spent.
 */

/** Refuses the attempt (QUERY_LIMIT_EXCEEDED, reported as refused: 'budget') when the budget is spent. */
function budget(observer: UpstreamObserver | undefined, next: Stage): Stage {
  return (call, attempt) => {
    const { calls } = call.caller;
    if (calls.made < calls.max) return next(call, attempt);
    observer?.refused(call.route.method, call.route.template, 'budget');
    return Promise.reject(budgetSpent(calls.max));
  };
}

function spend(next: Stage): Stage {
  return (call, attempt) => {
    call.caller.calls.made++;
    return next(call, attempt);
  };
}

/** The request has made as many upstream calls as one request may: the rest of its fields fail. */
function budgetSpent(max: number): GatewayError {
  return new GatewayError(
    'QUERY_LIMIT_EXCEEDED',
    `This request needed more than ${max} calls to the REST API, the most one request may make. Ask for fewer items or split the query.`,
    { extensions: { maxUpstreamCalls: max } },
  );
}

/**
 * Each attempt that leaves the gateway, counted (UpstreamObserver.sent: outcome and duration)
 * and traced: its span is a child of the active one, and the wire sends its `traceparent`.
 * `host` is the REST API's, for the span's `server.address`.
 */
function observe(telemetry: UpstreamTelemetry, host: string, next: Wire): Stage {
  const { observer, tracer } = telemetry;
  return async (call, attempt) => {
    const { route } = call;
    const started = performance.now();
    const span = tracer?.startSpan(route.name, {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': call.method,
        'url.template': route.template,
        'server.address': host,
        ...(attempt > 0 && { 'http.request.resend_count': attempt }),
      },
    });
    try {
      const response = await next(call, span);
      observer?.sent(
        route.method,
        route.template,
        String(response.status),
        (performance.now() - started) / 1000,
        attempt > 0,
      );
      span?.setAttribute('http.response.status_code', response.status);
      if (response.status >= 500) span?.setStatus({ code: SpanStatusCode.ERROR });
      return response;
    } catch (error) {
      const kind = failureKind(error);
      observer?.sent(route.method, route.template, kind, (performance.now() - started) / 1000, attempt > 0);
      span?.setAttribute('error.type', kind);
      span?.setStatus({ code: SpanStatusCode.ERROR, message: kind });
      throw error;
    } finally {
      span?.end();
    }
  };
}
