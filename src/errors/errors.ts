import { GraphQLError } from 'graphql';
import { ERROR_CODES, type ErrorCode } from './error-codes.ts';

/**
 * Every error the gateway shows a client as a GraphQL error. Each has a stable `extensions.code`;
 * code branches on it (or on `instanceof`), never on message text. Upstream response bodies never
 * reach these messages beyond the `message` field of the spec's documented codes
 * (upstream/error-mapping.ts), and never the caller's key.
 * Business failures of createWithdrawalIntent are not errors but typed results: see
 * withdrawals/user-errors.ts. How REST answers map to these: upstream/error-mapping.ts.
 */

/** What the REST API answered, attached as `extensions.upstream` so clients can branch on it. */
export interface UpstreamInfo {
  status: number;
  code: string | null;
}

/**
 * The HTTP status of a response whose every root field failed with this code (useOperationStatus),
 * from ERROR_CODES. `always`: whatever media type the client accepts (the key was refused).
 * Otherwise only for `application/graphql-response+json`, and only when every error has a code of
 * this kind, as GraphQL over HTTP allows; `application/json` keeps 200 and the client reads
 * `extensions.code`. Codes not listed keep 200.
 */
export const OPERATION_HTTP_STATUS: Partial<Record<ErrorCode, { status: number; always: boolean }>> =
  Object.fromEntries(
    Object.entries(ERROR_CODES)
      .filter(([, row]) => row.when === 'always' || row.when === 'operation')
      .map(([code, row]) => [code, { status: row.status, always: row.when === 'always' }]),
  );

/** What the REST API answered that the client is not shown (its code and message), for the log only. */
export interface WithheldAnswer {
  code: string | null;
  message: string | null;
}

export class GatewayError extends GraphQLError {
  readonly code: ErrorCode;
  readonly upstream: UpstreamInfo | undefined;
  /** The REST API's own words, replaced by a generic message; logged with the request id (useErrorLogging). */
  readonly withheld: WithheldAnswer | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: {
      upstream?: UpstreamInfo;
      extensions?: Record<string, unknown>;
      cause?: unknown;
      withheld?: WithheldAnswer;
    } = {},
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
    this.withheld = options.withheld;
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

/**
 * A retry that could not decide what the key's earlier attempt did (see withdrawals/reconcile.ts):
 * nothing was sent, and the key stays blocked until a retry can decide. `reason` says why;
 * `candidates` are the global ids of the intents that may be the key's; `retryAfterSeconds`, when
 * set, is when a retry may decide.
 */
export function outcomeStillUnknown(
  idempotencyKey: string,
  reason: string,
  candidates: readonly string[],
  retryAfterMs: number | null,
) {
  const message =
    reason === 'WINDOW_OPEN' || retryAfterMs !== null
      ? `The withdrawal may or may not have been created, and the gateway cannot tell yet (${reason}). Retry with the same idempotencyKey after retryAfterSeconds.`
      : `The withdrawal may or may not have been created, and the gateway cannot tell which intent is this key's (${reason}). Nothing was sent. Check the candidates in withdrawalIntents; this idempotencyKey stays blocked.`;
  return new GatewayError('OUTCOME_UNKNOWN', message, {
    extensions: {
      idempotencyKey,
      reason,
      candidates,
      ...(retryAfterMs !== null && { retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) }),
    },
  });
}
