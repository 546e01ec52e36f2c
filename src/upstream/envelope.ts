import { upstreamMalformed } from '../errors/errors.ts';
import type { UpstreamResponse } from './call.ts';
import { fromUpstreamStatus } from './error-mapping.ts';
import type { Page, PagingDTO } from './types.ts';

/**
 * The spec's envelopes, decoded: a non-2xx answer throws its mapped GatewayError; a 2xx that is not
 * the success envelope `{ code: "ok", data, paging? }` throws UPSTREAM_ERROR, never reaching a resolver.
 */

export type Decoder<T> = (data: unknown, paging: unknown) => T;

export function decodeResponse<T>(response: UpstreamResponse, decode: Decoder<T>): T {
  const { status, json } = response;
  if (status < 200 || status >= 300) {
    const envelope = isObject(json) ? json : {};
    const code = typeof envelope.code === 'string' ? envelope.code : null;
    const message = typeof envelope.message === 'string' ? envelope.message : null;
    throw fromUpstreamStatus(status, code, message, response.retryAfterMs);
  }
  if (!isObject(json)) throw upstreamMalformed(status, 'not a JSON object');
  if (json.code !== 'ok') throw upstreamMalformed(status, 'envelope code is not "ok"');
  return decode(json.data, json.paging);
}

export function decodeOne<T extends { id: string }>(data: unknown): T {
  if (!isObject(data) || typeof data.id !== 'string') throw upstreamMalformed(200, 'data is not a resource');
  return data as unknown as T;
}

export function decodePage<T extends { id: string }>(data: unknown, paging: unknown): Page<T> {
  if (!Array.isArray(data)) throw upstreamMalformed(200, 'data is not a list');
  if (!isPaging(paging)) throw upstreamMalformed(200, 'paging is missing or malformed');
  for (const item of data) decodeOne<T>(item);
  return { items: data as T[], paging };
}

/** Whether a 2xx body is the success envelope: the micro-cache keeps nothing else. */
export function isOkEnvelope(json: unknown): boolean {
  return isObject(json) && json.code === 'ok' && 'data' in json;
}

export function envelopeCode(json: unknown): string | null {
  return isObject(json) && typeof json.code === 'string' ? json.code : null;
}

function isPaging(value: unknown): value is PagingDTO {
  if (!isObject(value)) return false;
  return ['size', 'page', 'count', 'limit', 'totalCount', 'totalPages'].every((k) =>
    Number.isSafeInteger(value[k]),
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
