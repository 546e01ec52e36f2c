import { GatewayError, outcomeUnknown } from '../errors/errors.ts';
import type { UpstreamResponse } from './call.ts';
import { decodeOne, decodeResponse, envelopeCode } from './envelope.ts';
import { fromUpstreamStatus } from './error-mapping.ts';
import type { WithdrawalIntentDTO } from './types.ts';

/**
 * What one POST /withdrawal-intents did (MerchantWalletClient.createWithdrawalIntent), decided once
 * from the HTTP facts (docs/withdrawals.md, Where it is decided). `error`: what the caller is shown.
 */
export type WithdrawalPostResult =
  /** A 2xx carrying the intent: it exists. */
  | { outcome: 'created'; intent: WithdrawalIntentDTO }
  /** A 4xx: nothing created; `code` as the client sees it (`extensions.upstream.code`: a word or null). */
  | { outcome: 'rejected'; status: number; code: string | null; error: GatewayError }
  /** Never left the gateway (an open circuit, a spent call budget, a key refused lately): nothing created. */
  | { outcome: 'not_sent'; error: GatewayError }
  /** May have reached the REST API with no usable answer back, so may have created one: OUTCOME_UNKNOWN. */
  | { outcome: 'unknown'; error: GatewayError };

/** The decision table of an answered POST: a 4xx alone says nothing was created. */
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
 * A withdrawal refused before it was sent: the same error, saying so, with `sent: false`. A key refused
 * lately keeps the REST API's 401 words, the answer a refused key gets everywhere (operation-status.ts).
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
