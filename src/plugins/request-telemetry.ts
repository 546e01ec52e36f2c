import { performance } from 'node:perf_hooks';
import { trace } from '@opentelemetry/api';
import { type DocumentNode, type ExecutionResult, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { GatewayContext } from '../context.ts';
import { type GatewayMetrics, type Outcome, UNVERIFIED_OPERATION } from '../observability/metrics.ts';
import { sharedResultOf } from './query-deduplication.ts';
import { refusalCodeOf } from './refusal.ts';
import { requestIdOf } from './request-id.ts';

/** Paths probed every few seconds by orchestrators and scrapers: logged at debug, not info. */
const PROBES: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

interface RequestState {
  started: number;
  /** The operation as the parsed document names it (for the log; metrics wait for execution). */
  parsed?: { name: string | null; type: string };
  executed?: { name: string | null; type: string; context: GatewayContext };
  codes: string[];
  /** Whether some data came back (a partial result) when there were errors. */
  hasData: boolean;
  /** A GraphQL result was produced (not GraphiQL's page, not a probe). */
  graphql: boolean;
}

export interface RequestReporterOptions {
  logger: Logger;
  metrics: GatewayMetrics | null;
  /** Whether an operation name may have its own metric label; false counts it as `__unverified`. */
  countsName: (context: GatewayContext, name: string) => boolean;
}

export interface RequestTelemetryOptions extends RequestReporterOptions {
  /** The GraphQL path: only its requests count as GraphQL requests. */
  graphqlEndpoint: string;
}

/**
 * One JSON access-log line per HTTP request, and the request metrics (docs/observability.md);
 * never the key, the variables or the document. Install it first: it must see every request,
 * those refused by later plugins included, before query deduplication ends a joiner's execution.
 */
export function useRequestTelemetry(options: RequestTelemetryOptions): Plugin<GatewayContext> {
  const states = new WeakMap<Request, RequestState>();
  const report = requestReporter(options);
  return {
    onRequest({ request, serverContext }) {
      const arrived = arrivals.get((serverContext as { req?: object } | undefined)?.req ?? request);
      states.set(request, {
        started: arrived ?? performance.now(),
        codes: [],
        hasData: false,
        graphql: false,
      });
    },
    onParse({ context }) {
      const state = states.get(context.request);
      if (!state) return;
      return ({ result }) => {
        if (!result || result instanceof Error) return;
        state.parsed = operationOf(result, context.params.operationName);
      };
    },
    onExecute({ args }) {
      const context = args.contextValue;
      const state = states.get(context.request);
      if (!state) return;
      state.executed = { ...(state.parsed ?? operationOf(args.document, args.operationName)), context };
    },
    onResultProcess({ request, result }) {
      const state = states.get(request);
      if (!state) return;
      state.graphql = true;
      for (const one of Array.isArray(result) ? result : [result]) {
        if (Symbol.asyncIterator in one) continue;
        const { errors, data } = one as ExecutionResult;
        if (data != null) state.hasData = true;
        for (const error of errors ?? []) {
          const code = (error.extensions as { code?: unknown } | undefined)?.code;
          state.codes.push(typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR');
        }
      }
    },
    onResponse({ request, response }) {
      const state = states.get(request);
      if (!state) return;
      const refused = refusalCodeOf(request);
      if (refused) state.codes.push(refused);
      const path = pathOf(request.url);
      const headers = request.headers;
      report({
        requestId: requestIdOf(request),
        method: request.method,
        path,
        status: response.status,
        started: state.started,
        graphql: path === options.graphqlEndpoint && (state.graphql || refused !== undefined),
        codes: state.codes,
        hasData: state.hasData,
        ...(state.parsed && { parsed: state.parsed }),
        ...(state.executed && { executed: state.executed }),
        header: (name) => headers.get(name),
      });
    },
  };
}

/** When the hot path (src/execution/hot-path.ts) took up a Node request it may hand to Yoga: its duration counts from then. */
const arrivals = new WeakMap<object, number>();

/** Notes when the Node request `req` arrived (performance.now()), for the request it becomes in Yoga. */
export function markArrival(req: object, at: number): void {
  arrivals.set(req, at);
}

/** What one HTTP request's access-log line and metrics are made of. */
export interface RequestReport {
  requestId: string;
  method: string;
  path: string;
  status: number;
  /** performance.now() when the request arrived. */
  started: number;
  /** A GraphQL result was produced, or the request was refused as a GraphQL request. */
  graphql: boolean;
  codes: string[];
  hasData: boolean;
  parsed?: { name: string | null; type: string };
  executed?: { name: string | null; type: string; context: GatewayContext };
  /** A request header's value, or null. */
  header: (name: string) => string | null;
}

/** The metrics and access-log line of one request, for useRequestTelemetry and the hot path alike. */
export function requestReporter(options: RequestReporterOptions): (r: RequestReport) => void {
  const { metrics } = options;
  // No redaction: the line holds known fields only (docs/benchmark.md#figures-behind-design-choices).
  const logger = options.logger.child({}, { redact: [] });
  const nameLabel = nameLabelOf(options.countsName);
  return (r) => {
    const seconds = (performance.now() - r.started) / 1000;
    const { graphql, executed } = r;
    const codes = [...new Set(r.codes)];
    const outcome: Outcome = codes.length === 0 ? 'success' : r.hasData ? 'partial' : 'error';
    const caller = executed?.context.caller;
    if (graphql && metrics) {
      metrics.request({
        operationName: executed ? nameLabel(executed) : undefined,
        operationType: executed?.type,
        outcome,
        status: r.status,
        seconds,
        errorCodes: r.codes,
        upstreamCalls: caller?.calls.made ?? 0,
      });
    }
    const probe = PROBES.has(r.path);
    if (!logger.isLevelEnabled(probe ? 'debug' : 'info')) return;
    const line = {
      requestId: r.requestId,
      method: r.method,
      path: r.path,
      status: r.status,
      durationMs: Math.round(seconds * 10_000) / 10,
      ...(graphql && {
        operationName: (executed ?? r.parsed)?.name ?? null,
        operationType: (executed ?? r.parsed)?.type ?? null,
        outcome,
        errorCodes: codes,
        upstreamCalls: caller?.calls.made ?? 0,
        cacheHits: caller?.reads.fromCache ?? 0,
        coalesced: caller?.reads.joined ?? 0,
        sharedResult: executed ? sharedResultOf(executed.context) : null,
      }),
      client: {
        name: clientHeader(r.header, 'graphql-client-name', 'apollographql-client-name'),
        version: clientHeader(r.header, 'graphql-client-version', 'apollographql-client-version'),
      },
      ...traceIdOfActiveSpan(),
    };
    if (probe) logger.debug(line, 'request');
    else logger.info(line, 'request');
  };
}

/** The name to count an executed operation under: its own, or `__unverified` (countsName). */
function nameLabelOf(
  countsName: (context: GatewayContext, name: string) => boolean,
): (executed: { name: string | null; context: GatewayContext }) => string | null {
  return ({ name, context }) => (name === null || countsName(context, name) ? name : UNVERIFIED_OPERATION);
}

function operationOf(document: DocumentNode, operationName: string | null | undefined) {
  const operation = getOperationAST(document, operationName);
  return { name: operation?.name?.value ?? null, type: operation?.operation ?? 'unknown' };
}

/** The path of an absolute URL, without parsing the whole URL (this runs for every request). */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start === -1) return '/';
  const end = url.search(/[?#]/);
  return url.slice(start, end === -1 ? undefined : end);
}

/** A client-name header, bounded: it is the caller's text. */
function clientHeader(
  header: (name: string) => string | null,
  name: string,
  apolloName: string,
): string | null {
  const value = header(name) ?? header(apolloName);
  return value === null ? null : value.slice(0, 64).replace(/[^\x20-\x7e]/g, '?');
}

function traceIdOfActiveSpan(): { traceId?: string } {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, traceFlags } = span.spanContext();
  return traceFlags & 1 ? { traceId } : {};
}
