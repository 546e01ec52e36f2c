import { GraphQLError } from 'graphql';

/**
 * Every error the gateway shows a client. Each class has a stable `extensions.code`; code branches
 * on it (or on `instanceof`), never on message text. Upstream response bodies never reach these
 * messages beyond the spec's own `message` field, and never the caller's key.
 */

/** What the REST API answered, attached as `extensions.upstream` so clients can branch on it. */
export interface UpstreamInfo {
  status: number;
  code: string | null;
}

export type GatewayErrorCode =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'BAD_USER_INPUT'
  | 'NOT_FOUND'
  | 'RATE_LIMITED'
  | 'UPSTREAM_TIMEOUT'
  | 'UPSTREAM_UNAVAILABLE'
  | 'UPSTREAM_ERROR'
  | 'OUTCOME_UNKNOWN'
  | 'API_KEY_IN_URL';

/** HTTP status to answer with when this error fails the whole operation. */
const HTTP_STATUS: Record<GatewayErrorCode, number> = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  BAD_USER_INPUT: 400,
  NOT_FOUND: 404,
  RATE_LIMITED: 429,
  UPSTREAM_TIMEOUT: 504,
  UPSTREAM_UNAVAILABLE: 503,
  UPSTREAM_ERROR: 502,
  OUTCOME_UNKNOWN: 502,
  API_KEY_IN_URL: 400,
};

export class GatewayError extends GraphQLError {
  readonly code: GatewayErrorCode;
  readonly upstream: UpstreamInfo | undefined;

  constructor(
    code: GatewayErrorCode,
    message: string,
    options: { upstream?: UpstreamInfo; extensions?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, {
      extensions: {
        code,
        ...(options.upstream && { upstream: options.upstream }),
        ...options.extensions,
      },
    });
    this.name = 'GatewayError';
    // Kept as `cause`, not `originalError`: Yoga masks any error whose originalError chain holds a
    // non-GraphQL error, and the cause (an undici error) is for logs only.
    if (options.cause !== undefined) this.cause = options.cause;
    this.code = code;
    this.upstream = options.upstream;
  }

  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }
}

export const isGatewayError = (error: unknown): error is GatewayError => error instanceof GatewayError;

export function unauthenticated(
  message = 'A valid API key is required: send Authorization: Bearer <API key>.',
) {
  return new GatewayError('UNAUTHENTICATED', message, { extensions: { http: { status: 401 } } });
}

export function badUserInput(message: string, field?: readonly string[]) {
  return new GatewayError('BAD_USER_INPUT', message, { extensions: field ? { field } : {} });
}

/** A 4xx/5xx answer of the REST API, mapped to the gateway's codes. */
export function fromUpstreamStatus(
  status: number,
  code: string | null,
  message: string | null,
  retryAfterMs?: number,
): GatewayError {
  const upstream = { status, code };
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
    // upstream text a client sees.
    return new GatewayError('BAD_USER_INPUT', message ?? 'The REST API rejected the request.', { upstream });
  }
  if (status === 502 || status === 503) {
    return new GatewayError('UPSTREAM_UNAVAILABLE', 'The REST API is unavailable.', { upstream });
  }
  if (status === 504) return new GatewayError('UPSTREAM_TIMEOUT', 'The REST API timed out.', { upstream });
  return new GatewayError('UPSTREAM_ERROR', 'The REST API failed to answer the request.', { upstream });
}

export function upstreamTimeout(cause: unknown) {
  return new GatewayError('UPSTREAM_TIMEOUT', 'The REST API did not answer in time.', { cause });
}

export function upstreamUnavailable(cause: unknown) {
  return new GatewayError('UPSTREAM_UNAVAILABLE', 'The REST API could not be reached.', { cause });
}

export function upstreamMalformed(status: number, detail: string) {
  return new GatewayError('UPSTREAM_ERROR', `The REST API answered with an unexpected body: ${detail}.`, {
    upstream: { status, code: null },
  });
}

/**
 * A withdrawal whose outcome the gateway cannot know: the request may have reached the REST API
 * (timeout, reset, 5xx after sending). Never retried by the gateway; the client retries with the
 * same idempotency key.
 */
export function outcomeUnknown(idempotencyKey: string | null, cause: unknown, upstream?: UpstreamInfo) {
  return new GatewayError(
    'OUTCOME_UNKNOWN',
    idempotencyKey
      ? 'The withdrawal may or may not have been created. Retry with the same idempotencyKey to get its outcome.'
      : 'The withdrawal may or may not have been created. Check withdrawalIntents before retrying; send an idempotencyKey to make retries safe.',
    { cause, ...(upstream && { upstream }), extensions: { idempotencyKey } },
  );
}

// --- typed results of createWithdrawalIntent (members of CreateWithdrawalIntentPayload) ---------

/**
 * A business failure of createWithdrawalIntent, returned as data rather than as a GraphQL error.
 * `code` is the REST API's code verbatim (e.g. `withdrawal_intent.balance_insufficient`).
 */
export abstract class WithdrawalUserError extends Error {
  abstract readonly code: string;
}

export class DataInvalidError extends WithdrawalUserError {
  readonly code = 'data_invalid';
  /** Path of the offending input field, e.g. ["input", "amount"]; null when the REST API did not say. */
  readonly field: string[] | null;

  constructor(message: string, field: string[] | null = null) {
    super(message);
    this.field = field;
  }
}

export class ConfigIncompleteError extends WithdrawalUserError {
  readonly code = 'withdrawal_intent.config_incomplete';
}
export class DestinationInvalidError extends WithdrawalUserError {
  readonly code = 'withdrawal_intent.destination_invalid';
}
export class DestinationInternalError extends WithdrawalUserError {
  readonly code = 'withdrawal_intent.destination_internal';
}
export class ServiceFeeNotCoveredError extends WithdrawalUserError {
  readonly code = 'withdrawal_intent.service_fee_not_covered';
}
export class BalanceInsufficientError extends WithdrawalUserError {
  readonly code = 'withdrawal_intent.balance_insufficient';
}
export class DailyLimitExceededError extends WithdrawalUserError {
  readonly code = 'withdrawal_intent.daily_limit_exceeded';
}
export class MonthlyLimitExceededError extends WithdrawalUserError {
  readonly code = 'withdrawal_intent.monthly_limit_exceeded';
}
export class IdempotencyKeyReusedError extends WithdrawalUserError {
  readonly code = 'idempotency_key_reused';
}

type UserErrorClass = new (message: string) => WithdrawalUserError;

const USER_ERRORS: Record<string, UserErrorClass> = {
  data_invalid: DataInvalidError,
  'withdrawal_intent.config_incomplete': ConfigIncompleteError,
  'withdrawal_intent.destination_invalid': DestinationInvalidError,
  'withdrawal_intent.destination_internal': DestinationInternalError,
  'withdrawal_intent.service_fee_not_covered': ServiceFeeNotCoveredError,
  'withdrawal_intent.balance_insufficient': BalanceInsufficientError,
  'withdrawal_intent.daily_limit_exceeded': DailyLimitExceededError,
  'withdrawal_intent.monthly_limit_exceeded': MonthlyLimitExceededError,
  idempotency_key_reused: IdempotencyKeyReusedError,
};

/** The typed mutation result for a REST business error code, or null for any other code. */
export function withdrawalUserError(
  code: string | null | undefined,
  message: string,
): WithdrawalUserError | null {
  const ErrorClass = code ? USER_ERRORS[code] : undefined;
  return ErrorClass ? new ErrorClass(message) : null;
}

/** The typed mutation result for a REST error, or null when it is not a business failure. */
export function toWithdrawalUserError(error: GatewayError): WithdrawalUserError | null {
  return withdrawalUserError(error.upstream?.code, error.message);
}
