import type { Span } from '@opentelemetry/api';
import type { Caller } from './caller.ts';
import type { RouteLabels } from './routes.ts';

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

/** One attempt of a call (`attempt` 0 is the first): every stage but the wire has this shape. */
export type Attempt = (call: UpstreamCall, attempt: number) => Promise<UpstreamResponse>;

/** The last stage: the request itself, carrying `span`'s traceparent when the attempt is traced. */
export type Wire = (call: UpstreamCall, span: Span | undefined) => Promise<UpstreamResponse>;

/** Upstream calls under way and timers pending (deadlines, backoffs): Transport.activity(). */
export interface Activity {
  calls: number;
  timers: number;
}
