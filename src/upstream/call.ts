import type { Span, Tracer } from '@opentelemetry/api';
import type { Caller } from './caller.ts';

/**
 * One call to the REST API as each stage of the transport sees it (transport.ts composes them):
 * made once per GET or POST, the same object for every attempt of it.
 */
export interface UpstreamCall {
  method: 'GET' | 'POST';
  route: RouteLabels;
  /** Below the base path, with its query: `/deposits?page=1&size=20`. */
  path: string;
  caller: Caller;
  /** Headers of this call beyond `accept`, `authorization`, `x-request-id` and `traceparent`. */
  headers: Readonly<Record<string, string>>;
  body: string | undefined;
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

/**
 * A stage of the transport (retry, fair share, budget, circuit, spend, observe): takes one attempt
 * of a call (`attempt` 0 is the first) and hands it on to the next; the wire, the last, is `Wire`.
 */
export type Stage = (call: UpstreamCall, attempt: number) => Promise<UpstreamResponse>;

/** The last stage: the request itself, carrying `span`'s traceparent when the attempt is traced. */
export type Wire = (call: UpstreamCall, span: Span | undefined) => Promise<UpstreamResponse>;

/** Upstream calls under way and timers pending (deadlines, backoffs): Transport.activity(). */
export interface Activity {
  calls: number;
  timers: number;
}

/**
 * The REST API's routes as the gateway names them. The client names a route by its method and
 * path template below the base path (`GET /deposits/{id}`): the circuit breakers and /readyz key
 * on that. Metrics and spans name it with the base path, and nowhere else builds those labels.
 */

/** Where the spec puts every route of the REST API, below the configured base URL. */
export const BASE_PATH = '/external/v1';

export interface RouteLabels {
  /** As the client names it: `GET /deposits/{id}`. */
  route: string;
  method: string;
  /** The path template with the base path: `/external/v1/deposits/{id}` (metrics' `route` label). */
  template: string;
  /** The span name: `GET /external/v1/deposits/{id}`. */
  name: string;
}

/** Made once per route: the client's routes are a handful of constants, so this stays that small. */
const labelled = new Map<string, RouteLabels>();

/** The labels of a route named `METHOD /template`. */
export function routeLabels(route: string): RouteLabels {
  let labels = labelled.get(route);
  if (!labels) {
    const [method = 'GET', template = route] = route.split(' ');
    labels = { route, method, template: BASE_PATH + template, name: `${method} ${BASE_PATH}${template}` };
    labelled.set(route, labels);
  }
  return labels;
}

/**
 * What the upstream client reports about its calls, for metrics (src/observability/metrics.ts).
 * Routes are templates as routeLabels labels them (RouteLabels.template), never a path with an id in it.
 */
export interface UpstreamObserver {
  /**
   * One attempt that left the gateway ended: `outcome` is the HTTP status, or how it failed when
   * no answer came ('timeout', 'reset', 'refused', 'deadline', 'error'). `retry`: not the first
   * attempt of its GET.
   */
  sent(method: string, route: string, outcome: string, seconds: number, retry: boolean): void;
  /** An attempt that never left: the route's circuit was open, or the request's call budget spent. */
  refused(method: string, route: string, reason: 'circuit_open' | 'budget'): void;
  /** A GET answered by the micro-cache ('hit'), an identical call in flight ('coalesced'), or the REST API ('miss'). */
  cache(result: 'hit' | 'miss' | 'coalesced'): void;
}

/** Metrics and traces of the upstream client; either may be absent (METRICS=false, no OTEL endpoint). */
export interface UpstreamTelemetry {
  observer?: UpstreamObserver;
  /** Spans per attempt, and the `traceparent` sent with it. */
  tracer?: Tracer;
}
