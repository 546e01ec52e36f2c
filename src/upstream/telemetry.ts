import type { Tracer } from '@opentelemetry/api';

/**
 * What the upstream client reports about its calls, for metrics (src/observability/metrics.ts).
 * Routes are templates as routes.ts labels them (RouteLabels.template), never a path with an id in it.
 */
export interface UpstreamObserver {
  /**
   * One attempt that left the gateway ended: `outcome` is the HTTP status, or how it failed when
   * no answer came ('timeout', 'reset', 'refused', 'deadline', 'error'). `retry`: not the first
   * attempt of its GET.
   */
  attempt(method: string, route: string, outcome: string, seconds: number, retry: boolean): void;
  /** An attempt that never left: the route's circuit was open, or the request's call budget spent. */
  refused(method: string, route: string, reason: 'circuit_open' | 'budget'): void;
  /** A GET answered by the micro-cache ('hit'), an identical call in flight ('coalesced'), or the REST API ('miss'). */
  cache(result: 'hit' | 'miss' | 'coalesced'): void;
}

/** Metrics and traces of the upstream client; either may be absent (METRICS=false, no OTEL endpoint). */
export interface UpstreamTelemetry {
  observer?: UpstreamObserver;
  /** Spans per attempt, and the `traceparent` sent with it. */
  tracer?: Tracer;
}
