import { performance } from 'node:perf_hooks';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Attempt, Wire } from './call.ts';
import type { UpstreamTelemetry } from './telemetry.ts';
import { failureKind } from './transport-errors.ts';

/**
 * Each attempt that leaves the gateway, counted (UpstreamObserver.attempt: outcome and duration)
 * and traced: its span is a child of the active one, and the wire sends its `traceparent`.
 * `host` is the REST API's, for the span's `server.address`.
 */
export function observe(telemetry: UpstreamTelemetry, host: string, next: Wire): Attempt {
  const { observer, tracer } = telemetry;
  return async (call, attempt) => {
    const { route } = call;
    const started = performance.now();
    const span = tracer?.startSpan(route.name, {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': call.method,
        'url.template': route.template,
        'server.address': host,
        ...(attempt > 0 && { 'http.request.resend_count': attempt }),
      },
    });
    try {
      const response = await next(call, span);
      observer?.attempt(
        route.method,
        route.template,
        String(response.status),
        (performance.now() - started) / 1000,
        attempt > 0,
      );
      span?.setAttribute('http.response.status_code', response.status);
      if (response.status >= 500) span?.setStatus({ code: SpanStatusCode.ERROR });
      return response;
    } catch (error) {
      const kind = failureKind(error);
      observer?.attempt(
        route.method,
        route.template,
        kind,
        (performance.now() - started) / 1000,
        attempt > 0,
      );
      span?.setAttribute('error.type', kind);
      span?.setStatus({ code: SpanStatusCode.ERROR, message: kind });
      throw error;
    } finally {
      span?.end();
    }
  };
}
