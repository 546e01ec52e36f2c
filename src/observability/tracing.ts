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
 * OpenTelemetry tracing: an SDK TracerProvider exporting OTLP/HTTP (JSON) in batches, started only
 * when an OTLP endpoint is configured; without one no span object is ever made (docs/observability.md).
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
 * Starts tracing: the process's context manager (once per process) and a provider of our own, not
 * registered globally. `exporter` replaces the OTLP exporter (tests).
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
