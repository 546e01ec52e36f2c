import type { Span, Tracer } from '@opentelemetry/api';
import type { Caller } from './caller.ts';

/** One GET or POST as the transport's stages see it (transport.ts): the same object for every attempt. */
export interface UpstreamCall {
  method: 'GET' | 'POST';
  route: RouteLabels;
  /** Below the base path, with its query: `/deposits?page=1&size=20`. */
  path: string;
  caller: Caller;
  /** Beyond `accept`, `authorization`, `x-request-id` and `traceparent`, which every call has. */
  headers: Readonly<Record<string, string>>;
  body: string | undefined;
}

/** One answer of the REST API, as received. */
export interface UpstreamResponse {
  status: number;
  /** Undefined when the body was not JSON. */
  json: unknown;
  text: string;
  /** Retry-After, in milliseconds. */
  retryAfterMs?: number;
}

/** One stage of the transport: takes an attempt (0 is the first) and hands it to the next. */
export type Stage = (call: UpstreamCall, attempt: number) => Promise<UpstreamResponse>;

/** The last stage, the request itself; it sends `span`'s traceparent when the attempt is traced. */
export type Wire = (call: UpstreamCall, span: Span | undefined) => Promise<UpstreamResponse>;

export interface Activity {
  calls: number;
  timers: number;
}

/**
 * Route labels: the client names a route `GET /deposits/{id}` (circuit breakers and /readyz key on
 * that); metrics and spans name it with the base path, built here only.
 */

export const BASE_PATH = '/external/v1';

export interface RouteLabels {
  route: string;
  method: string;
  /** With the base path: `/external/v1/deposits/{id}` (metrics' `route` label). */
  template: string;
  name: string;
}

const labelled = new Map<string, RouteLabels>();

export function routeLabels(route: string): RouteLabels {
  let labels = labelled.get(route);
  if (!labels) {
    const [method = 'GET', template = route] = route.split(' ');
    labels = { route, method, template: BASE_PATH + template, name: `${method} ${BASE_PATH}${template}` };
    labelled.set(route, labels);
  }
  return labels;
}

/** What the client reports for metrics; `route` is always a template (RouteLabels.template). */
export interface UpstreamObserver {
  /** An attempt ended: `outcome` is its HTTP status, else its failure kind (transport-errors.ts). */
  sent(method: string, route: string, outcome: string, seconds: number, retry: boolean): void;
  refused(method: string, route: string, reason: 'circuit_open' | 'budget'): void;
  cache(result: 'hit' | 'miss' | 'coalesced'): void;
}

/** Either may be absent (METRICS=false, no OTLP endpoint). */
export interface UpstreamTelemetry {
  observer?: UpstreamObserver;
  tracer?: Tracer;
}
