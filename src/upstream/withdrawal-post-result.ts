import { GatewayError, outcomeUnknown } from '../errors/errors.ts';
import type { UpstreamResponse } from './call.ts';
import { decodeOne, decodeResponse, envelopeCode } from './envelope.ts';
import { fromUpstreamStatus } from './error-mapping.ts';
import type { WithdrawalIntentDTO } from './types.ts';

/**
 * What one POST /withdrawal-intents did (MerchantWalletClient.createWithdrawalIntent), decided
 * once, from the HTTP facts. Only `created` and `rejected` are answers of the REST API; `error` is
 * what the caller is shown when the POST did not create an intent.
 */
export type WithdrawalPostResult =
  /** A 2xx carrying the intent: it exists. */
  | { outcome: 'created'; intent: WithdrawalIntentDTO }
  /**
   * A 4xx: the REST API refused the POST and created nothing. `code` is its envelope's code as the
   * client is shown it (`extensions.upstream.code`: a machine word, else null); `error` the mapped
   * GatewayError, whose message is the spec's for a documented code.
   */
  | { outcome: 'rejected'; status: number; code: string | null; error: GatewayError }
  /** Never left the gateway (an open circuit, a spent call budget, a key refused lately): nothing was created. */
  | { outcome: 'not_sent'; error: GatewayError }
  /**
   * May have reached the REST API, and no usable answer came back (a timeout, a reset, a 5xx, a
   * 1xx/3xx, a 2xx that cannot be read): it may have created an intent. `error` is OUTCOME_UNKNOWN.
   */
  | { outcome: 'unknown'; error: GatewayError };

/**
 * The decision table of an answered POST: a 4xx alone says nothing was created; a 2xx that reads
 * as an intent says one was; a 5xx, a 1xx/3xx, or a 2xx that cannot be read may follow a commit.
 */
export function withdrawalPostResult(
  response: UpstreamResponse,
  idempotencyKey: string | null,
): WithdrawalPostResult {
  const { status, json } = response;
  if (status >= 400 && status < 500) {
    const { message } = (typeof json === 'object' && json !== null ? json : {}) as { message?: unknown };
    const error = fromUpstreamStatus(
      status,
      envelopeCode(json),
      typeof message === 'string' ? message : null,
      response.retryAfterMs,
    );
    return { outcome: 'rejected', status, code: error.upstream?.code ?? null, error };
  }
  if (status >= 200 && status < 300) {
    try {
      return { outcome: 'created', intent: decodeResponse(response, decodeOne<WithdrawalIntentDTO>) };
    } catch (error) {
      return { outcome: 'unknown', error: outcomeUnknown(idempotencyKey, error, { status, code: null }) };
    }
  }
  return {
    outcome: 'unknown',
    error: outcomeUnknown(idempotencyKey, null, { status, code: envelopeCode(json) }),
  };
}

/**
 * A withdrawal refused before it was sent: the same error, saying so, so the client knows nothing
 * moved. A key refused within the TTL keeps the words of the REST API's 401 (the answer a refused
 * key gets everywhere, operation-status.ts), with `sent: false`.
 */
export function notSent(error: GatewayError): GatewayError {
  if (error.code === 'UNAUTHENTICATED') {
    return new GatewayError(error.code, error.message, {
      ...(error.upstream && { upstream: error.upstream }),
      extensions: { sent: false },
    });
  }
  return new GatewayError(
    error.code,
    `The withdrawal was not sent, so nothing was created: ${error.message}`,
    { extensions: { ...error.extensions, sent: false } },
  );
}
