import {
  type GatewayError,
  upstreamMalformed,
  upstreamTimeout,
  upstreamUnavailable,
} from '../errors/errors.ts';

/**
 * The one table of how a call can get no answer (undici's error codes, the socket's errno, and
 * DEADLINE, the request's own deadline): whether a GET is retried after it, whether it counts against
 * the route's circuit, and the error a client sees. A code not in it is an `error`: neither,
 * UPSTREAM_UNAVAILABLE.
 */

export interface TransportFailure {
  /** A metric label and span `error.type`. */
  kind: 'refused' | 'reset' | 'dns' | 'timeout' | 'deadline' | 'too_large';
  /** The REST API was not reached, or the connection was lost: a GET may be sent again. */
  retry: boolean;
  /** The REST API did not answer in time, or at all (not a DNS failure, not the request's deadline). */
  circuit: boolean;
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
  ['ENOTFOUND', { kind: 'dns', retry: true, circuit: false, error: upstreamUnavailable }],
  ['EAI_AGAIN', { kind: 'dns', retry: true, circuit: false, error: upstreamUnavailable }],
  // No connection, no headers, or a body that stalls (connectTimeoutMs, …).
  ['UND_ERR_CONNECT_TIMEOUT', { kind: 'timeout', retry: true, circuit: true, error: upstreamTimeout }],
  ['UND_ERR_HEADERS_TIMEOUT', { kind: 'timeout', retry: false, circuit: true, error: upstreamTimeout }],
  ['UND_ERR_BODY_TIMEOUT', { kind: 'timeout', retry: false, circuit: true, error: upstreamTimeout }],
  ['DEADLINE', { kind: 'deadline', retry: false, circuit: false, error: upstreamTimeout }],
  ['UND_ERR_RES_EXCEEDED_MAX_SIZE', { kind: 'too_large', retry: false, circuit: false, error: overSizeCap }],
]);

function errorCodeOf(error: unknown): string {
  // The request's deadline aborts with a DOMException named TimeoutError (wire.ts).
  if ((error as { name?: unknown })?.name === 'TimeoutError') return 'DEADLINE';
  const code = (error as { code?: unknown })?.code ?? (error as { cause?: { code?: unknown } })?.cause?.code;
  return typeof code === 'string' ? code : '';
}

export function failureOf(error: unknown): TransportFailure | undefined {
  return FAILURES.get(errorCodeOf(error));
}

export function transportError(error: unknown): GatewayError {
  return (failureOf(error)?.error ?? upstreamUnavailable)(error);
}

export function failureKind(error: unknown): string {
  return failureOf(error)?.kind ?? 'error';
}
