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
 * How bytes reach the REST API: one undici Pool with keep-alive per process, explicit timeouts and
 * the request's deadline on every call. Each call passes these stages (call.ts), outermost first:
 *
 *   retry (GETs only) → fair share → budget → circuit → spend → observe → wire
 *
 * docs/upstream-client.md#layout says what each does. Nothing here knows a resource or an envelope.
 */

export interface TransportOptions extends RetryOptions {
  baseURL: string;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  connections: number;
  maxResponseBytes: number;
  circuitBreaker: CircuitBreakerOptions;
  /** Default: CALLS_PER_KEY and CALLS_PER_KEY_PER_SECOND; `callsPerKey: 0` turns the stage off. */
  fairShare?: Partial<FairShareOptions>;
}

/** Each share's calls in flight by default (docs/upstream-client.md#fair-share). */
export const CALLS_PER_KEY = 2;

/** Each share's calls a second by default (docs/upstream-client.md#fair-share). */
export const CALLS_PER_KEY_PER_SECOND = 10;

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

export class Transport {
  private readonly pool: Pool;
  /** The readiness probe's own connection (ping). */
  private readonly probe: Client;
  private readonly pathPrefix: string;
  private readonly breakers: CircuitBreakers;
  private readonly underWay: Activity = { calls: 0, timers: 0 };
  private readonly fairShare: FairShare;
  /** One attempt through every stage but retry: a POST's only one. */
  private readonly sendOnce: Stage;
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

  /** One GET, retried (retry.ts): its last answer, or a GatewayError (no answer, open circuit, budget). */
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
   * One POST, never retried (a second attempt could move money twice), never waiting for its share.
   * Throws a GatewayError when it was not sent (open circuit, spent budget), else the raw transport
   * error when no answer came, for the caller to decide what it means (withdrawal-post-result.ts).
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

  /** Whether the REST API answers HTTP (a keyless probe's 401 counts), on a connection of its own. */
  async ping(): Promise<boolean> {
    const response = await this.probe.request({ method: 'GET', path: `${this.pathPrefix}/wallets` });
    await response.body.dump();
    return response.statusCode < 500;
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.close(), this.probe.destroy()]);
  }

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
 * The request's call budget (Caller.calls) around the circuit: `budget` refuses an attempt once the
 * budget is spent (QUERY_LIMIT_EXCEEDED, reported as refused); `spend` counts one about to leave.
 */

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

function budgetSpent(max: number): GatewayError {
  return new GatewayError(
    'QUERY_LIMIT_EXCEEDED',
    `This request needed more than ${max} calls to the REST API, the most one request may make. Ask for fewer items or split the query.`,
    { extensions: { maxUpstreamCalls: max } },
  );
}

/** Counts and traces each attempt that leaves; `host` is the span's `server.address`. */
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
