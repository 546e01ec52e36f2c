import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { context, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { Client, type Dispatcher, Pool } from 'undici';
import { GatewayError } from '../errors.ts';
import type { Caller } from './caller.ts';
import { type CircuitBreakerOptions, CircuitBreakers } from './circuit-breakers.ts';
import {
  CONNECTION_ERRORS,
  errorCodeOf,
  failureKind,
  RETRYABLE_STATUS,
  transportError,
} from './error-mapping.ts';
import type { UpstreamObserver, UpstreamTelemetry } from './telemetry.ts';

/**
 * How bytes reach the REST API: one undici Pool with keep-alive per process, explicit timeouts, the
 * GraphQL request's deadline on every call, and bounded, jittered retries for idempotent GETs.
 * Every attempt passes the request's call budget (Caller.calls) and the route's circuit breaker
 * (circuit-breakers.ts) before it leaves, and is counted (UpstreamObserver) and traced: its span is
 * a child of the active one, and its `traceparent` and the GraphQL request's `x-request-id` go with
 * it, so the REST API's traces and logs join the gateway's. Nothing here knows a resource or an
 * envelope (client.ts and envelope.ts do).
 */

export interface TransportOptions {
  baseURL: string;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** Extra attempts for an idempotent GET after a connection error or a 502/503/504. */
  maxRetries: number;
  /** Base of the jittered exponential backoff between GET attempts. */
  retryBaseDelayMs: number;
  /** A 429's Retry-After up to this long is waited out and the GET retried; longer ones are surfaced. */
  maxRetryAfterMs: number;
  connections: number;
  maxResponseBytes: number;
  circuitBreaker: CircuitBreakerOptions;
}

/** One answer of the REST API, as received. The micro-cache keeps `status` and `text` of 2xx GETs. */
export interface UpstreamResponse {
  status: number;
  /** The parsed body, or undefined when it was not JSON. */
  json: unknown;
  /** The body as received. */
  text: string;
  /** The Retry-After header, in milliseconds, when the answer had one. */
  retryAfterMs?: number;
}

const BASE_PATH = '/external/v1';

const propagator = new W3CTraceContextPropagator();
const headerSetter = {
  set(carrier: Record<string, string>, key: string, value: string) {
    carrier[key] = value;
  },
};

/** A route (`GET /deposits/{id}`) as metrics and spans name it: method and `/external/v1/deposits/{id}`. */
interface RouteLabels {
  method: string;
  template: string;
  /** The span name: `GET /external/v1/deposits/{id}`. */
  name: string;
}

export class Transport {
  private readonly pool: Pool;
  /** The readiness probe's own connection (ping). */
  private readonly probe: Client;
  private readonly options: TransportOptions;
  private readonly pathPrefix: string;
  private readonly host: string;
  private readonly breakers: CircuitBreakers;
  /** Upstream calls under way and timers pending (deadlines, backoffs), for activity(). */
  private calls = 0;
  private timers = 0;
  private readonly observer: UpstreamObserver | undefined;
  private readonly tracer: Tracer | undefined;
  private readonly routes = new Map<string, RouteLabels>();

  constructor(options: TransportOptions, telemetry: UpstreamTelemetry = {}) {
    this.options = options;
    this.observer = telemetry.observer;
    this.tracer = telemetry.tracer;
    this.breakers = new CircuitBreakers(options.circuitBreaker);
    const url = new URL(options.baseURL);
    this.pathPrefix = url.pathname.replace(/\/$/, '') + BASE_PATH;
    this.host = url.host;
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
  }

  /**
   * One GET (path below /external/v1; `route` its template, e.g. `GET /deposits/{id}`) with
   * bounded, jittered retries on connection errors and 502/503/504, and a 429 waited out when its
   * Retry-After is short and fits the deadline. Returns the last answer, whatever its status;
   * throws a GatewayError when no answer came, the route's circuit is open, or the request's call
   * budget is spent.
   */
  async get(caller: Caller, route: string, path: string): Promise<UpstreamResponse> {
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= this.options.maxRetries || !this.hasTimeLeft(caller, attempt);
      let response: UpstreamResponse;
      try {
        response = await this.send('GET', route, path, caller, {}, undefined, attempt);
      } catch (error) {
        if (error instanceof GatewayError) throw error;
        if (!last && CONNECTION_ERRORS.has(errorCodeOf(error))) {
          await this.backoff(attempt);
          continue;
        }
        throw transportError(error);
      }
      if (!last && RETRYABLE_STATUS.has(response.status)) {
        await this.backoff(attempt);
        continue;
      }
      const wait = response.retryAfterMs;
      if (
        !last &&
        response.status === 429 &&
        wait !== undefined &&
        wait <= this.options.maxRetryAfterMs &&
        (caller.deadline === undefined || Date.now() + wait < caller.deadline)
      ) {
        await this.sleep(wait);
        continue;
      }
      return response;
    }
  }

  /**
   * One POST, never retried: a second attempt could move money twice. Throws a GatewayError when it
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
    return this.send('POST', route, path, caller, json, body, 0);
  }

  /** Each route's circuit state. */
  circuits() {
    return this.breakers.states();
  }

  /**
   * Whether the REST API answers HTTP at all; a keyless probe gets a 401, which counts. It goes on
   * a connection of its own: a REST API that stalls probes cannot take the pool's connections from
   * real requests (and /readyz makes one probe at a time, plugins/health.ts).
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

  /** Calls under way, timers pending, and the pool's sockets and queue. */
  activity() {
    const { connected, free, pending, queued, running } = this.pool.stats;
    return { calls: this.calls, timers: this.timers, pool: { connected, free, pending, queued, running } };
  }

  private backoff(attempt: number): Promise<void> {
    const ceiling = this.options.retryBaseDelayMs * 2 ** attempt;
    return this.sleep(Math.random() * ceiling);
  }

  private async sleep(ms: number): Promise<void> {
    this.timers++;
    try {
      await sleep(ms);
    } finally {
      this.timers--;
    }
  }

  /** Whether another attempt still fits before the caller's deadline. */
  private hasTimeLeft(caller: Caller, attempt: number): boolean {
    return (
      caller.deadline === undefined ||
      Date.now() + this.options.retryBaseDelayMs * 2 ** attempt < caller.deadline
    );
  }

  /** One attempt: the budget, then the route's circuit, then the wire. */
  private async send(
    method: 'GET' | 'POST',
    route: string,
    path: string,
    caller: Caller,
    headers: Record<string, string>,
    body: string | undefined,
    attempt: number,
  ): Promise<UpstreamResponse> {
    const labels = this.labelsOf(route);
    if (caller.calls.made >= caller.calls.max) {
      this.observer?.refused(labels.method, labels.template, 'budget');
      throw budgetSpent(caller.calls.max);
    }
    let sent = false;
    try {
      return await this.breakers.run(route, () => {
        sent = true;
        caller.calls.made++;
        return this.observed(labels, method, path, caller, headers, body, attempt);
      });
    } catch (error) {
      if (!sent) this.observer?.refused(labels.method, labels.template, 'circuit_open');
      throw error;
    }
  }

  /** One attempt on the wire, counted and traced. */
  private async observed(
    labels: RouteLabels,
    method: 'GET' | 'POST',
    path: string,
    caller: Caller,
    headers: Record<string, string>,
    body: string | undefined,
    attempt: number,
  ): Promise<UpstreamResponse> {
    const started = performance.now();
    const span = this.tracer?.startSpan(labels.name, {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': method,
        'url.template': labels.template,
        'server.address': this.host,
        ...(attempt > 0 && { 'http.request.resend_count': attempt }),
      },
    });
    try {
      const response = await this.request(method, path, caller, headers, body, span);
      this.observer?.attempt(
        labels.method,
        labels.template,
        String(response.status),
        (performance.now() - started) / 1000,
        attempt > 0,
      );
      span?.setAttribute('http.response.status_code', response.status);
      if (response.status >= 500) span?.setStatus({ code: SpanStatusCode.ERROR });
      return response;
    } catch (error) {
      const kind = failureKind(error);
      this.observer?.attempt(
        labels.method,
        labels.template,
        kind,
        (performance.now() - started) / 1000,
        attempt > 0,
      );
      span?.setAttribute('error.type', kind);
      span?.setStatus({ code: SpanStatusCode.ERROR, message: kind });
      throw error;
    } finally {
      span?.end();
    }
  }

  private labelsOf(route: string): RouteLabels {
    let labels = this.routes.get(route);
    if (!labels) {
      const [method = 'GET', template = route] = route.split(' ');
      labels = { method, template: BASE_PATH + template, name: `${method} ${BASE_PATH}${template}` };
      this.routes.set(route, labels);
    }
    return labels;
  }

  private async request(
    method: 'GET' | 'POST',
    path: string,
    caller: Caller,
    headers: Record<string, string>,
    body: string | undefined,
    span: Span | undefined,
  ): Promise<UpstreamResponse> {
    const remaining = caller.deadline === undefined ? undefined : caller.deadline - Date.now();
    if (remaining !== undefined && remaining <= 0) throw deadlinePassed();
    // A timer of our own rather than AbortSignal.timeout(): that one stays scheduled until it fires,
    // up to REQUEST_DEADLINE_MS after the call ended; this one is cleared as soon as the call ends.
    const deadline = remaining === undefined ? undefined : new AbortController();
    const timer =
      deadline &&
      setTimeout(
        () => deadline.abort(new DOMException('request deadline passed', 'TimeoutError')),
        remaining,
      );
    if (timer) this.timers++;
    this.calls++;
    let response: Dispatcher.ResponseData;
    let text: string;
    try {
      const sent: Record<string, string> = {
        accept: 'application/json',
        authorization: caller.authorization,
        ...headers,
      };
      if (caller.requestId) sent['x-request-id'] = caller.requestId;
      if (span) propagator.inject(trace.setSpan(context.active(), span), sent, headerSetter);
      response = await this.pool.request({
        method,
        path: this.pathPrefix + path,
        headers: sent,
        body,
        ...(deadline && { signal: deadline.signal }),
      });
      text = await response.body.text();
    } catch (error) {
      // However undici words an abort, past the deadline it is the deadline.
      if (deadline?.signal.aborted) throw deadlinePassed(error);
      throw error;
    } finally {
      this.calls--;
      if (timer) {
        clearTimeout(timer);
        this.timers--;
      }
    }
    let json: unknown;
    try {
      // Frozen, all the way down: coalescing and the micro-cache hand the same objects to several
      // requests, so none may change them (one did: a feed reversed a page in place).
      json = deepFreeze(JSON.parse(text));
    } catch {
      json = undefined;
    }
    const retryAfter = response.headers['retry-after'];
    const retryAfterMs = parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
    return {
      status: response.statusCode,
      json,
      text,
      ...(retryAfterMs !== undefined && { retryAfterMs }),
    };
  }
}

/** The request has made as many upstream calls as one request may: the rest of its fields fail. */
function budgetSpent(max: number): GatewayError {
  return new GatewayError(
    'QUERY_LIMIT_EXCEEDED',
    `This request needed more than ${max} calls to the REST API, the most one request may make. Ask for fewer items or split the query.`,
    { extensions: { maxUpstreamCalls: max } },
  );
}

function deadlinePassed(cause?: unknown): Error {
  return Object.assign(new Error('request deadline passed', cause === undefined ? {} : { cause }), {
    code: 'DEADLINE',
  });
}

/** Retry-After as delay-seconds or an HTTP date, in milliseconds from now. */
function parseRetryAfter(value: string | undefined): number | undefined {
  if (!value) return undefined;
  if (/^\d{1,6}$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** `value` with every object and array in it frozen, in place. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
  return value;
}
