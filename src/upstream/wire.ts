import { context, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { Dispatcher, Pool } from 'undici';
import { settledAnswer } from '../shared/deep-freeze.ts';
import type { Activity, Wire } from './call.ts';

/**
 * The last stage: one attempt as one request on the undici Pool, with the request's deadline, the
 * Authorization value unchanged, `x-request-id` and `traceparent`. Resolves to the answer whatever
 * its status; rejects with undici's error when none came, or DEADLINE once the deadline passed.
 */

const propagator = new W3CTraceContextPropagator();
const headerSetter = {
  set(carrier: Record<string, string>, key: string, value: string) {
    carrier[key] = value;
  },
};

export function wire(pool: Pool, pathPrefix: string, activity: Activity): Wire {
  return async (call, span) => {
    const { caller } = call;
    const remaining = caller.deadline === undefined ? undefined : caller.deadline - Date.now();
    if (remaining !== undefined && remaining <= 0) throw deadlinePassed();
    // Not AbortSignal.timeout(), whose timer stays scheduled until it fires: this one ends with the call.
    const deadline = remaining === undefined ? undefined : new AbortController();
    const timer =
      deadline &&
      setTimeout(
        () => deadline.abort(new DOMException('request deadline passed', 'TimeoutError')),
        remaining,
      );
    if (timer) activity.timers++;
    activity.calls++;
    let response: Dispatcher.ResponseData;
    let text: string;
    try {
      const sent: Record<string, string> = {
        accept: 'application/json',
        authorization: caller.authorization,
        ...call.headers,
      };
      if (caller.requestId) sent['x-request-id'] = caller.requestId;
      if (span) propagator.inject(trace.setSpan(context.active(), span), sent, headerSetter);
      response = await pool.request({
        method: call.method,
        path: pathPrefix + call.path,
        headers: sent,
        body: call.body,
        ...(deadline && { signal: deadline.signal }),
      });
      text = await response.body.text();
    } catch (error) {
      // However undici words an abort, past the deadline it is the deadline.
      if (deadline?.signal.aborted) throw deadlinePassed(error);
      throw error;
    } finally {
      activity.calls--;
      if (timer) {
        clearTimeout(timer);
        activity.timers--;
      }
    }
    let json: unknown;
    try {
      json = settledAnswer(JSON.parse(text));
    } catch {
      json = undefined;
    }
    const retryAfter = response.headers['retry-after'];
    const retryAfterMs = parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
    return {
      status: response.statusCode,
      json,
      text,
      ...(retryAfterMs !== undefined && { retryAfterMs }),
    };
  };
}

/** The error of a call whose request's deadline passed (DEADLINE), on the wire or in fair-share.ts. */
export function deadlinePassed(cause?: unknown): Error {
  return Object.assign(new Error('request deadline passed', cause === undefined ? {} : { cause }), {
    code: 'DEADLINE',
  });
}

/** Retry-After as delay-seconds or an HTTP date, in milliseconds from now. */
function parseRetryAfter(value: string | undefined): number | undefined {
  if (!value) return undefined;
  if (/^\d{1,6}$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
