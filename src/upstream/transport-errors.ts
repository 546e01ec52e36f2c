import {
  type GatewayError,
  upstreamMalformed,
  upstreamTimeout,
  upstreamUnavailable,
} from '../errors/errors.ts';

/**
 * What each way of getting no answer from the REST API means for the gateway, in one table: undici's
 * error codes (its `lib/core/errors.js`, and the socket's errno underneath) and DEADLINE, the GraphQL
 * request's own deadline (wire.ts). GET retries (retry.ts), the circuit breakers
 * (circuit-breakers.ts), metrics and spans (transport.ts, observe) and the error a client sees all read it.
 * A code not in it (or none) is an `error`: not retried, not a circuit failure, UPSTREAM_UNAVAILABLE.
 */

export interface TransportFailure {
  /**
   * How it failed, in a word fit for a metric label or a span attribute (UpstreamObserver.sent's
   * outcome, the span's `error.type`).
   */
  kind: 'refused' | 'reset' | 'dns' | 'timeout' | 'deadline' | 'too_large';
  /** An idempotent GET may be sent again: the REST API was not reached, or the connection was lost. */
  retry: boolean;
  /**
   * Counts against the route's circuit: the REST API did not answer in time, or at all. A failed
   * name lookup (`dns`) and the GraphQL request's own deadline do not count.
   */
  circuit: boolean;
  /** The error a client sees. */
  error: (cause: unknown) => GatewayError;
}

const overSizeCap = () => upstreamMalformed(200, 'body over the size cap');

const FAILURES: ReadonlyMap<string, TransportFailure> = new Map<string, TransportFailure>([
  // No connection, or the connection lost before the answer was in.
  ['ECONNREFUSED', { kind: 'refused', retry: true, circuit: true, error: upstreamUnavailable }],
  ['ECONNRESET', { kind: 'reset', retry: true, circuit: true, error: upstreamUnavailable }],
  ['EPIPE', { kind: 'reset', retry: true, circuit: true, error: upstreamUnavailable }],
  ['UND_ERR_SOCKET', { kind: 'reset', retry: true, circuit: true, error: upstreamUnavailable }],
  ['UND_ERR_CLOSED', { kind: 'reset', retry: true, circuit: true, error: upstreamUnavailable }],
  // The REST API's host name did not resolve.
  ['ENOTFOUND', { kind: 'dns', retry: true, circuit: false, error: upstreamUnavailable }],
  ['EAI_AGAIN', { kind: 'dns', retry: true, circuit: false, error: upstreamUnavailable }],
  // undici's timeouts: no connection, no headers, or a body that stalls (connectTimeoutMs, …).
  ['UND_ERR_CONNECT_TIMEOUT', { kind: 'timeout', retry: true, circuit: true, error: upstreamTimeout }],
  ['UND_ERR_HEADERS_TIMEOUT', { kind: 'timeout', retry: false, circuit: true, error: upstreamTimeout }],
  ['UND_ERR_BODY_TIMEOUT', { kind: 'timeout', retry: false, circuit: true, error: upstreamTimeout }],
  // The GraphQL request's own deadline passed (wire.ts).
  ['DEADLINE', { kind: 'deadline', retry: false, circuit: false, error: upstreamTimeout }],
  // A body over maxResponseBytes.
  ['UND_ERR_RES_EXCEEDED_MAX_SIZE', { kind: 'too_large', retry: false, circuit: false, error: overSizeCap }],
]);

/** undici's (or our deadline's) code for a failed call; '' when it has none. */
function errorCodeOf(error: unknown): string {
  // The request's deadline aborts with a DOMException named TimeoutError (see wire.ts).
  if ((error as { name?: unknown })?.name === 'TimeoutError') return 'DEADLINE';
  const code = (error as { code?: unknown })?.code ?? (error as { cause?: { code?: unknown } })?.cause?.code;
  return typeof code === 'string' ? code : '';
}

/** What a failed call means for us (see FAILURES); undefined for an error the table does not know. */
export function failureOf(error: unknown): TransportFailure | undefined {
  return FAILURES.get(errorCodeOf(error));
}

/** A call that got no usable answer, as a client sees it: timeout, oversized body, or out of reach. */
export function transportError(error: unknown): GatewayError {
  return (failureOf(error)?.error ?? upstreamUnavailable)(error);
}

/** How a call that got no answer failed, in a word fit for a metric label or a span attribute. */
export function failureKind(error: unknown): string {
  return failureOf(error)?.kind ?? 'error';
}
