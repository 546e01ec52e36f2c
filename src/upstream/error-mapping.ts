import { shortenEchoes } from '../errors/echoes.ts';
import { USER_ERRORS } from '../errors/error-codes.ts';
import { GatewayError } from '../errors/errors.ts';

/** REST error answers in the gateway's codes; calls that got no answer: transport-errors.ts. */

/** Answers worth another attempt of a GET; the same count against a route's circuit. */
export const RETRYABLE_STATUS: ReadonlySet<number> = new Set([502, 503, 504]);

/** The REST codes of the user errors (USER_ERRORS); key-evidence.ts takes them as proof of a key. */
export const USER_ERROR_CODES: ReadonlySet<string> = new Set(USER_ERRORS.map((row) => row.code));

/** The codes whose `message` the spec writes for the caller, the only REST text a client sees. */
const DOCUMENTED_CODES: ReadonlySet<string> = new Set(['bad_request', ...USER_ERROR_CODES]);

/** A code as `extensions.upstream.code` repeats it: a machine word, else null (the log has it). */
const CODE_SHAPE = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * A 4xx/5xx answer in the gateway's codes. A client sees the REST API's `message` only for a 4xx with
 * a DOCUMENTED_CODES code (echoes shortened); any other 4xx gets a generic message, and what the
 * REST API said goes on the error as `withheld`, for the log only.
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
    const extensions =
      retryAfterMs === undefined ? {} : { retryAfterSeconds: Math.ceil(retryAfterMs / 1000) };
    return new GatewayError('RATE_LIMITED', 'The REST API is rate limiting requests.', {
      upstream,
      extensions,
    });
  }
  if (status >= 400 && status < 500) {
    // Any other text may name hosts or internals.
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
