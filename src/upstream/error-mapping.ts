import { shortenEchoes } from '../echoes.ts';
import { GatewayError, upstreamMalformed, upstreamTimeout, upstreamUnavailable } from '../errors.ts';

/**
 * What went wrong upstream, in the gateway's codes: a REST error answer by its status (and the
 * spec's code), a transport failure by undici's error code. The transport decides what to retry
 * from the same sets.
 */

/** Answers worth another attempt of an idempotent GET. */
export const RETRYABLE_STATUS: ReadonlySet<number> = new Set([502, 503, 504]);

/** Failures to reach the REST API or to keep the connection: a GET may be retried after these. */
export const CONNECTION_ERRORS: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
]);

const TIMEOUT_ERRORS: ReadonlySet<string> = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  // The GraphQL request's own deadline (see Caller.deadline).
  'DEADLINE',
]);

/**
 * The codes whose `message` the spec writes for the caller (its error table: validation messages
 * that name the field, the withdrawal refusals), and the Idempotency-Key extension's
 * `idempotency_key_reused`. Only these messages reach a client; see fromUpstreamStatus.
 */
export const DOCUMENTED_CODES: ReadonlySet<string> = new Set([
  'bad_request',
  'data_invalid',
  'withdrawal_intent.config_incomplete',
  'withdrawal_intent.destination_invalid',
  'withdrawal_intent.destination_internal',
  'withdrawal_intent.service_fee_not_covered',
  'withdrawal_intent.balance_insufficient',
  'withdrawal_intent.daily_limit_exceeded',
  'withdrawal_intent.monthly_limit_exceeded',
  'idempotency_key_reused',
]);

/** A code as `extensions.upstream.code` repeats it: a machine word, else null (the log has it). */
const CODE_SHAPE = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * A 4xx/5xx answer of the REST API, mapped to the gateway's codes. Of the REST API's text, a
 * client sees only the `message` of a 4xx with a DOCUMENTED_CODES code (its echoes shortened);
 * any other 4xx (an unknown code, no code) gets a generic message, and what the REST API said is
 * kept on the error as `withheld` for the log (useErrorLogging), never for the client.
 */
export function fromUpstreamStatus(
  status: number,
  code: string | null,
  message: string | null,
  retryAfterMs?: number,
): GatewayError {
  const upstream = { status, code: code !== null && CODE_SHAPE.test(code) ? code : null };
  if (status === 401)
    return new GatewayError('UNAUTHENTICATED', 'The API key was not accepted.', { upstream });
  if (status === 403) {
    return new GatewayError('FORBIDDEN', 'The API key is not allowed to perform this operation.', {
      upstream,
    });
  }
  if (status === 404) return new GatewayError('NOT_FOUND', 'Not found.', { upstream });
  if (status === 429) {
    // How long the client should wait, when the REST API said.
    const extensions =
      retryAfterMs === undefined ? {} : { retryAfterSeconds: Math.ceil(retryAfterMs / 1000) };
    return new GatewayError('RATE_LIMITED', 'The REST API is rate limiting requests.', {
      upstream,
      extensions,
    });
  }
  if (status >= 400 && status < 500) {
    // The spec's message field is meant for humans and names the offending field; it is the only
    // upstream text a client sees. Anything else may name hosts or internals.
    if (code !== null && DOCUMENTED_CODES.has(code) && message !== null) {
      return new GatewayError('BAD_USER_INPUT', shortenEchoes(message), { upstream });
    }
    return new GatewayError(
      'BAD_USER_INPUT',
      `The REST API refused the request (HTTP ${status}); its answer is logged under this request's x-request-id.`,
      { upstream, withheld: { code, message } },
    );
  }
  if (status === 502 || status === 503) {
    return new GatewayError('UPSTREAM_UNAVAILABLE', 'The REST API is unavailable.', { upstream });
  }
  if (status === 504) return new GatewayError('UPSTREAM_TIMEOUT', 'The REST API timed out.', { upstream });
  return new GatewayError('UPSTREAM_ERROR', 'The REST API failed to answer the request.', { upstream });
}

/** undici's (or our deadline's) code for a failed call; '' when it has none. */
export function errorCodeOf(error: unknown): string {
  // The request's deadline aborts with a DOMException named TimeoutError (see Transport.send).
  if ((error as { name?: unknown })?.name === 'TimeoutError') return 'DEADLINE';
  const code = (error as { code?: unknown })?.code ?? (error as { cause?: { code?: unknown } })?.cause?.code;
  return typeof code === 'string' ? code : '';
}

/** A call that got no usable answer: timeout, oversized body, or the REST API out of reach. */
export function transportError(error: unknown): GatewayError {
  const code = errorCodeOf(error);
  if (TIMEOUT_ERRORS.has(code)) return upstreamTimeout(error);
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return upstreamMalformed(200, 'body over the size cap');
  return upstreamUnavailable(error);
}

/** How a call that got no answer failed, in a word fit for a metric label or a span attribute. */
export function failureKind(error: unknown): string {
  const code = errorCodeOf(error);
  if (code === 'DEADLINE') return 'deadline';
  if (TIMEOUT_ERRORS.has(code)) return 'timeout';
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  if (CONNECTION_ERRORS.has(code)) return 'reset';
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return 'too_large';
  return 'error';
}
