import {
  type Context,
  context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { requestIdOf } from './request-id.ts';
import { pathOf } from './request-telemetry.ts';

const propagator = new W3CTraceContextPropagator();
const headerGetter = {
  keys: (carrier: Headers) => [...carrier.keys()],
  get: (carrier: Headers, key: string) => carrier.get(key) ?? undefined,
};

/**
 * OpenTelemetry spans of a request: the HTTP request (continuing the caller's W3C `traceparent`),
 * then parse, validate and execute, each active while its phase runs, so upstream calls made during
 * execution are its children. Never the Authorization header, variables or the document.
 */
export function useTracing(tracer: Tracer): Plugin {
  const requests = new WeakMap<Request, Span>();

  /** A span around a synchronous phase. */
  const phase = (name: string, wrapped: () => void) => {
    const span = tracer.startSpan(name);
    try {
      context.with(trace.setSpan(context.active(), span), wrapped);
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  };

  return {
    instrumentation: {
      request({ request }, wrapped) {
        const parent = propagator.extract(ROOT_CONTEXT, request.headers, headerGetter);
        const path = pathOf(request.url);
        const span = tracer.startSpan(
          `${request.method} ${path}`,
          {
            kind: SpanKind.SERVER,
            attributes: {
              'http.request.method': request.method,
              'url.path': path,
              'http.route': path,
              'gateway.request_id': requestIdOf(request),
            },
          },
          parent,
        );
        requests.set(request, span);
        return during(span, parent, wrapped);
      },
      parse: (_, wrapped) => phase('graphql.parse', wrapped),
      validate: (_, wrapped) => phase('graphql.validate', wrapped),
      execute: (_, wrapped) => during(tracer.startSpan('graphql.execute'), context.active(), wrapped),
    },
    onExecute({ args }) {
      // Runs inside the execute span (instrumentation wraps the hooks too).
      const operation = getOperationAST(args.document, args.operationName);
      const attributes = {
        'graphql.operation.type': operation?.operation ?? 'unknown',
        'graphql.operation.name': operation?.name?.value ?? '',
      };
      trace.getActiveSpan()?.setAttributes(attributes);
      const request = (args.contextValue as { request?: Request }).request;
      if (request) requests.get(request)?.setAttributes(attributes);
    },
    onResponse({ request, response }) {
      const span = requests.get(request);
      if (!span) return;
      span.setAttribute('http.response.status_code', response.status);
      if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    },
  };
}

/** `span` active (a child of `parent`) while an asynchronous phase runs, and ended after it. */
function during(span: Span, parent: Context, wrapped: () => unknown): Promise<void> {
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      await wrapped();
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

function failed(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.name ?? 'error' });
}
