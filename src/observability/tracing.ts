import { context, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';

/**
 * OpenTelemetry tracing: an SDK TracerProvider exporting OTLP/HTTP (JSON) in batches. Only started
 * when an OTLP endpoint is configured (config.ts reads the standard OTEL_* variables); without
 * one no provider exists, no tracing plugin is installed and no span object is ever made.
 *
 * Spans are made by the gateway itself, not by monkey-patching instrumentations: the request,
 * parse, validate and execute (plugins/tracing.ts), each upstream attempt (upstream/transport.ts and wire.ts,
 * which also sends its `traceparent`), and the idempotency claim and reconciliation of
 * createWithdrawalIntent (withdrawals/service.ts). The active span travels with the async work
 * through AsyncLocalStorage, so an upstream call made by a DataLoader batch is a child of the
 * execution that asked for it.
 */

export type SamplerName =
  | 'always_on'
  | 'always_off'
  | 'traceidratio'
  | 'parentbased_always_on'
  | 'parentbased_always_off'
  | 'parentbased_traceidratio';

export interface TracingConfig {
  /** Where spans are POSTed (OTLP/HTTP, JSON), e.g. http://collector:4318/v1/traces. */
  url: string;
  serviceName: string;
  sampler: SamplerName;
  /** The ratio of the traceidratio samplers (OTEL_TRACES_SAMPLER_ARG). */
  ratio: number;
}

export interface Tracing {
  tracer: Tracer;
  /** Exports every span ended so far (tests; shutdown). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

function samplerOf(config: TracingConfig): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.ratio);
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/**
 * Starts tracing: the process's context manager (once per process) and a provider of our own,
 * which is not registered globally, so nothing else in the process traces through it by accident.
 * `exporter` replaces the OTLP exporter (tests); the exporter reads its other OTEL_EXPORTER_OTLP_*
 * variables (headers, timeout, compression) itself.
 */
export function startTracing(
  config: TracingConfig,
  options: { version: string; exporter?: SpanExporter },
): Tracing {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const exporter = options.exporter ?? new OTLPTraceExporter({ url: config.url });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': config.serviceName,
      'service.version': options.version,
    }),
    sampler: samplerOf(config),
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  return {
    tracer: provider.getTracer('merchant-wallet-gateway', options.version),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
