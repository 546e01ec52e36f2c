import { createGraphQLError } from 'graphql-yoga';

/**
 * Every `extensions.code` the gateway answers, with its HTTP status and what it means: the one
 * table of them. Errors are built from it (GatewayError in errors.ts, `requestError` below for
 * refusals before execution), useOperationStatus takes its statuses from it, and the table in
 * docs/errors.md is checked against it (test/integration/gateway/error-contract.test.ts).
 *
 * `status` is the HTTP status the code brings, and `when` says when it does:
 * - `request`: the request is refused before anything runs; the response has this status.
 * - `always`: whatever the client accepts, when every root field failed with it (a refused key
 *   fails the whole operation).
 * - `operation`: only for `application/graphql-response+json`, and only when every error is of
 *   such a code, as GraphQL over HTTP allows; `application/json` keeps 200.
 * - `field`: a field's error; the response stays 200 with partial data.
 * Where a code arises both ways (BAD_USER_INPUT for a variable is a 400, for an argument a field
 * error), the row gives the usual one and the builder the other.
 */
export const ERROR_CODES = {
  UNAUTHENTICATED: {
    status: 401,
    when: 'always',
    meaning: 'No or malformed API key, or the REST API refused it',
  },
  FORBIDDEN: { status: 403, when: 'always', meaning: 'The API key may not do this' },
  BAD_USER_INPUT: { status: 200, when: 'field', meaning: 'A bad argument or variable, or a REST 4xx' },
  RATE_LIMITED: {
    status: 429,
    when: 'operation',
    meaning: 'The REST API or RATE_LIMIT_PER_KEY limits this key',
  },
  UPSTREAM_TIMEOUT: { status: 504, when: 'operation', meaning: 'The REST API did not answer in time' },
  UPSTREAM_UNAVAILABLE: {
    status: 503,
    when: 'operation',
    meaning: 'The REST API cannot be reached, or its circuit is open',
  },
  UPSTREAM_ERROR: {
    status: 200,
    when: 'field',
    meaning: 'The REST API failed, or answered outside its contract',
  },
  OUTCOME_UNKNOWN: { status: 200, when: 'field', meaning: 'A withdrawal may or may not have been created' },
  API_KEY_IN_URL: { status: 400, when: 'request', meaning: 'A credential in the URL' },
  NOT_FOUND: { status: 200, when: 'field', meaning: 'A watched record this merchant does not have' },
  PERSISTED_DOCUMENT_REQUIRED: {
    status: 400,
    when: 'request',
    meaning: 'Only the manifest’s documents run here',
  },
  PERSISTED_QUERY_NOT_FOUND: { status: 400, when: 'request', meaning: 'An unknown persisted-document hash' },
  QUERY_LIMIT_EXCEEDED: {
    status: 400,
    when: 'request',
    meaning: 'A document over the depth, alias, token, directive or cost limits',
  },
  REQUEST_TOO_LARGE: { status: 413, when: 'request', meaning: 'A body over MAX_REQUEST_BYTES' },
  IDEMPOTENCY_UNAVAILABLE: {
    status: 503,
    when: 'operation',
    meaning: 'A withdrawal refused unsent: its key cannot be kept',
  },
  SUBSCRIPTION_LIMIT_EXCEEDED: { status: 200, when: 'field', meaning: 'Too many open subscriptions' },
  EVENT_ID_NOT_RESUMABLE: {
    status: 200,
    when: 'field',
    meaning: 'A subscription cannot resume from this event id (not this key’s, or too far behind)',
  },
  CSRF_HEADER_REQUIRED: {
    status: 403,
    when: 'request',
    meaning: 'A browser simple request without key or CSRF header',
  },
  NOT_ACCEPTABLE: {
    status: 406,
    when: 'request',
    meaning: 'A query with @defer or @stream from a client that accepts neither multipart/mixed nor SSE',
  },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, when: 'request', meaning: 'A POST that is not JSON' },
  BAD_REQUEST: { status: 400, when: 'request', meaning: 'Not a GraphQL request' },
  GRAPHQL_PARSE_FAILED: { status: 400, when: 'request', meaning: 'The document does not parse' },
  GRAPHQL_VALIDATION_FAILED: { status: 400, when: 'request', meaning: 'The document does not validate' },
  INTERNAL_SERVER_ERROR: { status: 200, when: 'field', meaning: 'A bug, masked as Unexpected error.' },
} as const satisfies Record<
  string,
  { status: number; when: 'request' | 'always' | 'operation' | 'field'; meaning: string }
>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * A refusal before execution, with its code and the HTTP status the table gives it (`status`
 * overrides it where a code is answered at another status, BAD_USER_INPUT for a variable, say).
 */
export function requestError(
  code: ErrorCode,
  message: string,
  options: { extensions?: Record<string, unknown>; status?: number } = {},
) {
  return createGraphQLError(message, {
    extensions: { code, http: { status: options.status ?? ERROR_CODES[code].status }, ...options.extensions },
  });
}

/**
 * The business failures of createWithdrawalIntent, returned as data (members of
 * CreateWithdrawalIntentPayload, each implementing UserError) rather than as GraphQL errors: one
 * row per failure, the REST code verbatim, the GraphQL type, its description. What is derived
 * from it: each row's error class (user-errors.ts in withdrawals/), its union member and schema
 * description (schema/types/withdrawal-intent.ts), the passing on of its REST message and its
 * worth as evidence of a key (DOCUMENTED_CODES and USER_ERROR_CODES, upstream/error-mapping.ts),
 * and, through the printed schema, what client caches are told (codegen's files, the urql
 * example's keys). So a new REST code is one new row here; docs/errors.md lists the rows (and
 * what else a new code needs), and a unit test holds the page to them.
 */
export const USER_ERRORS = [
  {
    code: 'data_invalid',
    type: 'DataInvalidError',
    description: 'The input violates the contract (code data_invalid).',
  },
  {
    code: 'withdrawal_intent.config_incomplete',
    type: 'WithdrawalConfigIncompleteError',
    description: 'The merchant has no complete withdrawal configuration.',
  },
  {
    code: 'withdrawal_intent.destination_invalid',
    type: 'DestinationInvalidError',
    description: 'The destination is outside the supported scope or invalid.',
  },
  {
    code: 'withdrawal_intent.destination_internal',
    type: 'DestinationInternalError',
    description: 'The destination is an address internal to the platform.',
  },
  {
    code: 'withdrawal_intent.service_fee_not_covered',
    type: 'ServiceFeeNotCoveredError',
    description: 'No withdrawable amount remains after the service fee.',
  },
  {
    code: 'withdrawal_intent.balance_insufficient',
    type: 'BalanceInsufficientError',
    description: 'The wallet lacks enough available balance.',
  },
  {
    code: 'withdrawal_intent.daily_limit_exceeded',
    type: 'DailyLimitExceededError',
    description: 'The amount exceeds the daily withdrawal limit.',
  },
  {
    code: 'withdrawal_intent.monthly_limit_exceeded',
    type: 'MonthlyLimitExceededError',
    description: 'The amount exceeds the monthly withdrawal limit.',
  },
  {
    // The sandbox's Idempotency-Key extension answers it too; the gateway's own store first.
    code: 'idempotency_key_reused',
    type: 'IdempotencyKeyReusedError',
    description: 'The idempotency key was used with a different input.',
  },
] as const;

export type UserErrorRow = (typeof USER_ERRORS)[number];
export type UserErrorCode = UserErrorRow['code'];
