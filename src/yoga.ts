import type { IncomingMessage, ServerResponse } from 'node:http';
import { useDisableIntrospection } from '@graphql-yoga/plugin-disable-introspection';
import type { Tracer } from '@opentelemetry/api';
import type { DocumentNode } from 'graphql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Config } from './config/config.ts';
import { authorizationOf, createContextFactory, type GatewayContext } from './context.ts';
import { createHotPath, handedOverContext } from './execution/hot-path.ts';
import { DEFAULT_MAX_UPSTREAM_CALLS, OperationCosts } from './execution/operation-cost.ts';
import type { WalletIndexing } from './loaders/index-builds.ts';
import type { ListResource } from './loaders/loaders.ts';
import type { GatewayMetrics, Scrape } from './observability/metrics.ts';
import { useAuthentication } from './plugins/authentication.ts';
import { CompiledQueries, useCompiledExecution } from './plugins/compiled-execution.ts';
import type { Compression } from './plugins/compression.ts';
import { useConditionalGet } from './plugins/conditional-get.ts';
import { useCSRFHeaderRequired } from './plugins/csrf-header-required.ts';
import { createDocumentCache, type DocumentCache, useDocumentCache } from './plugins/document-cache.ts';
import { useEagerStringify } from './plugins/eager-stringify.ts';
import { useEntitiesBound } from './plugins/entities-bound.ts';
import { maskUncodedError, useErrorContract } from './plugins/error-contract.ts';
import { useErrorLogging } from './plugins/error-logging.ts';
import { useGraphiQLDelivery } from './plugins/graphiql-delivery.ts';
import { type Readiness, useHealthChecks } from './plugins/health-checks.ts';
import { useIncrementalDelivery } from './plugins/incremental-delivery.ts';
import { KeptResults } from './plugins/kept-results.ts';
import { useMaxRequestBytes } from './plugins/max-request-bytes.ts';
import { useMetricsEndpoint } from './plugins/metrics-endpoint.ts';
import { useOperationStatus } from './plugins/operation-status.ts';
import { ResultSharing, type SharedHow, useQueryDeduplication } from './plugins/query-deduplication.ts';
import { type QueryLimits, useQueryLimits, walkCostOf } from './plugins/query-limits.ts';
import { type RateLimiter, useRateLimit } from './plugins/rate-limit.ts';
import { useRefuseKeyInURL } from './plugins/refuse-key-in-url.ts';
import { requestIdOf, useRequestId } from './plugins/request-id.ts';
import { requestReporter, useRequestTelemetry } from './plugins/request-telemetry.ts';
import { useReservedResponseKeys } from './plugins/reserved-response-keys.ts';
import { useResumableStreams } from './plugins/resumable-streams.ts';
import { useTracing } from './plugins/tracing.ts';
import {
  createPersistedQueryRegistry,
  operationNamesOf,
  type PersistedQueryRegistry,
  useTrustedDocuments,
} from './plugins/trusted-documents.ts';
import { schema as plainSchema, subgraphSchema } from './schema/index.ts';
import type { LivePolling } from './subscriptions/live.ts';
import type { Caller } from './upstream/caller.ts';
import type { CallerScopes } from './upstream/caller-scope.ts';
import type { Callers } from './upstream/callers.ts';
import type { MerchantWalletClient } from './upstream/client.ts';
import type { IdempotencyStore } from './withdrawals/idempotency-store.ts';
import type { WithdrawalService } from './withdrawals/service.ts';

/** GraphiQL's first screen: the example operations, and in sandbox mode the demo key and one tab per example. */
export interface GraphiQLDefaults {
  defaultQuery?: string;
  defaultAuthorization?: string | undefined;
  /** One tab per example with working variables (sandbox mode); replaces defaultQuery. */
  tabs?: { query: string; variables: string | null; headers: string | null }[];
}

/**
 * The parts the gateway runs on, built by createGatewayRuntime (src/runtime.ts); its settings come
 * from the configuration.
 */
export interface GatewayParts {
  client: MerchantWalletClient;
  /** Each request's Caller: its deadline and call budget (src/upstream/callers.ts). */
  callers: Callers;
  /** Callers' scopes, the client's: the rate limit and trusted documents count per scope. */
  scopes: CallerScopes;
  logger: Logger;
  /** The pollers behind subscriptions (subscriptions/live.ts); made with the same client. */
  live: LivePolling;
  /** createWithdrawalIntent's exactly-once service, over `idempotencyStore`. */
  withdrawals: WithdrawalService;
  /** Where idempotency keys of createWithdrawalIntent are kept (its health is /readyz's). */
  idempotencyStore: IdempotencyStore;
  /** What /readyz says besides its checks: which store, and whether the process is shutting down. */
  readiness: Readiness;
  /** GraphiQL at /graphql for browsers; false: off (GRAPHIQL). */
  graphiql: false | GraphiQLDefaults;
  /** The per-key inbound rate limit (RATE_LIMIT_PER_KEY); null: none. */
  rateLimiter: RateLimiter | null;
  /** Prometheus metrics (METRICS); null: none. The same object is the client's telemetry. */
  metrics: GatewayMetrics | null;
  /** What GET /metrics on the gateway's port answers; null: not served here (METRICS_PORT, or metrics off). */
  metricsEndpoint: Scrape | null;
  /** OpenTelemetry spans (OTEL_EXPORTER_OTLP_ENDPOINT); null: no tracing, at no cost. */
  tracer: Tracer | null;
  /** Parsed and validated documents kept across requests; default: createDocumentCache(). */
  documentCache?: DocumentCache;
  /** APQ's registered documents; default: createPersistedQueryRegistry(). */
  persistedQueries?: PersistedQueryRegistry;
  /** The wallet indexes and their background builds; undefined: off (WALLET_INDEX_MAX_BYTES=0). */
  walletIndexing: WalletIndexing | undefined;
  /** Brotli/gzip answers and the count of open compressed streams; undefined: off (COMPRESSION=false). */
  compression: Compression | undefined;
}

/**
 * Which operation names get their own metric label. With trusted documents on, the manifest's
 * names; otherwise the names sent with a key the REST API has accepted lately. Either way an
 * outsider cannot fill the label's slots (METRICS_MAX_OPERATION_NAMES) with made-up names.
 */
function countsOperationName(
  config: Config,
  deps: GatewayParts,
): (context: GatewayContext, name: string) => boolean {
  if (config.trustedDocuments.mode !== 'off') {
    const names = operationNamesOf(config.trustedDocuments.manifest);
    return (_context, name) => names.has(name);
  }
  return (context) => deps.client.keyKnownGood(context.caller);
}

export type Gateway = YogaServerInstance<Record<string, unknown>, GatewayContext> & {
  /**
   * What the HTTP server calls for each Node request: the hot path (src/execution/hot-path.ts), which hands
   * Yoga what it does not answer; Yoga itself with HOT_PATH=false. `fetch` is always Yoga's.
   */
  serveNode: (req: IncomingMessage, res: ServerResponse) => unknown;
};

/** The whole GraphQL gateway as one fetch-style handler; tests call `gateway.fetch` directly. */
export function createGateway(config: Config, deps: GatewayParts): Gateway {
  const { metrics, tracer, graphiql, walletIndexing, compression } = deps;
  const createContext = createContextFactory(deps);
  const { introspection } = config;
  // As a Federation subgraph (FEDERATION=true), or the plain schema.
  const schema = config.federation ? subgraphSchema : plainSchema;
  const limits: QueryLimits = {
    ...config.queryLimits,
    blockFieldSuggestions: !introspection,
    maxUpstreamCalls: config.maxUpstreamCallsPerRequest,
    merchants: {
      groupOf: (scope: string) => deps.client.merchants.of(scope),
      ...(walletIndexing && {
        learn: {
          known: (scope: string) => deps.client.merchants.known(scope),
          merchantOf: (caller: Caller) => deps.client.learnMerchant(caller),
        },
      }),
    },
    ...(walletIndexing && {
      walletIndexed: (scope: string, list: ListResource) =>
        walletIndexing.indexes.ready(deps.client.merchants.of(scope), list),
    }),
  };
  // What an outsider sends is not kept (parsed documents, APQ registrations): only what comes with
  // a key the REST API accepted lately, or is a document of the manifest.
  const keyKnownGood = (request: Request) => {
    const authorization = authorizationOf(request);
    return authorization !== null && deps.client.authorizationKnownGood(authorization);
  };
  const manifestTexts = new Set(config.trustedDocuments.manifest.values());
  // Shared by Yoga's plugins and the hot path, which must see and decide exactly as they do.
  const documentCache = deps.documentCache ?? createDocumentCache(config.documentCacheMaxBytes);
  const validated = new WeakMap<DocumentNode, string>();
  const compiled = new CompiledQueries();
  const costs = new OperationCosts(
    limits.maxUpstreamCalls ?? DEFAULT_MAX_UPSTREAM_CALLS,
    limits.walletIndexed,
  );
  const sharing = config.queryDeduplication
    ? new ResultSharing(new KeptResults(deps.client.cachedReads))
    : null;
  const generationScope = (context: GatewayContext) =>
    context.authorization ? deps.client.generationScope(context.caller) : null;
  const onShared = (_context: GatewayContext, how: SharedHow) => metrics?.deduplicated(how);
  const telemetry = { logger: deps.logger, metrics, countsName: countsOperationName(config, deps) };
  const yoga = createYoga<Record<string, unknown>, GatewayContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    context: ({ request, params, req }: { request: Request; params: unknown; req?: IncomingMessage }) =>
      handedOverContext(req) ??
      createContext({ request, params, requestId: requestIdOf(request) } as Parameters<
        typeof createContext
      >[0]),
    logging: deps.logger,
    // Yoga's masking, with a code on the executor's own errors (error-contract.ts).
    maskedErrors: { maskError: maskUncodedError },
    // Served by useGraphiQLDelivery below, which builds the page once.
    graphiql: false,
    // useMaxRequestBytes below enforces MAX_REQUEST_BYTES, chunked bodies included.
    maxRequestBodySize: false,
    // useDocumentCache below keeps parsed documents, bounded by bytes, for known-good keys and the manifest only.
    parserAndValidationCache: false,
    // One operation per request: batching would multiply every limit below.
    batching: false,
    // The GraphQL over HTTP persisted-documents parameter (useTrustedDocuments).
    extraParamNames: ['documentId'],
    plugins: [
      // First, so that their onResponse hooks run before every other plugin's, which then see the
      // answer as sent (a 304's status, a compressed body): a conditional GET's 304 first
      // (computed on the uncompressed body), then compression, which leaves 304s alone.
      useConditionalGet('/graphql'),
      ...(compression ? [compression] : []),
      // They see every request, the ones refused by the plugins below included.
      ...(tracer ? [useTracing(tracer)] : []),
      useRequestTelemetry({ ...telemetry, graphqlEndpoint: '/graphql' }),
      useRefuseKeyInURL(),
      ...(deps.metricsEndpoint ? [useMetricsEndpoint(deps.metricsEndpoint)] : []),
      useMaxRequestBytes(config.maxRequestBytes),
      useRequestId(),
      ...(deps.rateLimiter ? [useRateLimit({ limiter: deps.rateLimiter, scopes: deps.scopes })] : []),
      ...(graphiql
        ? [
            useGraphiQLDelivery({
              endpoint: '/graphql',
              graphiql: {
                title: 'Merchant Wallet GraphQL',
                defaultQuery: graphiql.defaultQuery,
                headers: graphiql.defaultAuthorization
                  ? JSON.stringify({ Authorization: graphiql.defaultAuthorization }, null, 2)
                  : undefined,
                shouldPersistHeaders: false,
                ...(graphiql.tabs && { defaultTabs: graphiql.tabs }),
              },
            }),
          ]
        : []),
      useHealthChecks({
        checks: { upstream: () => deps.client.ping(), idempotencyStore: () => deps.idempotencyStore.ping() },
        readiness: deps.readiness,
      }),
      // Browsers may send "simple" requests (GET, form posts) cross-site without a preflight:
      // without a Bearer key those must carry a custom header. JSON POSTs are preflighted and pass.
      useCSRFHeaderRequired(['x-graphql-csrf', 'x-graphql-yoga-csrf']),
      useErrorContract(),
      // @defer and @stream over multipart/mixed and SSE (docs/schema.md, Incremental delivery).
      useIncrementalDelivery(),
      // Subscriptions over SSE: event ids, and no `complete` when the gateway shuts down.
      useResumableStreams(),
      ...useTrustedDocuments({
        ...config.trustedDocuments,
        logger: deps.logger,
        metrics,
        callerScope: (request) => {
          const authorization = authorizationOf(request);
          return authorization === null ? null : deps.scopes.scopeOf(authorization);
        },
        keyKnownGood,
        maxTokens: config.queryLimits.maxTokens,
        registry: deps.persistedQueries ?? createPersistedQueryRegistry(config.apqMaxBytes),
      }),
      ...(introspection ? [] : [useDisableIntrospection()]),
      ...useQueryLimits(limits, costs),
      ...(config.federation ? [useEntitiesBound()] : []),
      useReservedResponseKeys(),
      useAuthentication(),
      useOperationStatus(),
      useErrorLogging(),
      // After every plugin that adds a validation rule (limits, introspection, response keys).
      useDocumentCache({
        cache: documentCache,
        mayKeep: (request, text) => manifestTexts.has(text) || keyKnownGood(request),
        validated,
      }),
      // After the plugins that may change a result: it serialises the result they have finished with.
      useEagerStringify(),
      // After the plugins that look at or change a result, before deduplication, which wraps the executor it finds.
      ...(config.compiledExecution
        ? [
            useCompiledExecution({
              logger: deps.logger,
              mayCompile: (context) => deps.client.keyKnownGood(context.caller),
              compiled,
            }),
          ]
        : []),
      // Last: a request joins another's execution only once every check above has passed for it.
      ...(config.queryDeduplication
        ? [useQueryDeduplication({ generationScope, sharing: sharing ?? undefined, onShared })]
        : []),
    ],
  });
  // The hot path serves compiled queries only, and none is compiled with COMPILED_EXECUTION=false.
  // Tracing and trusted documents are Yoga's alone: a span per request, documents by id.
  const hot =
    config.hotPath && config.compiledExecution && !tracer && config.trustedDocuments.mode === 'off'
      ? createHotPath(
          {
            schema,
            graphqlEndpoint: '/graphql',
            maxRequestBytes: config.maxRequestBytes,
            documents: documentCache,
            validated,
            compiled,
            costs,
            maxCost: limits.maxCost,
            walkCost: walkCostOf(limits),
            walksPerKey: limits.walksPerKey,
            sharing,
            generationScope,
            onShared,
            authorizationKnownGood: (authorization) => deps.client.authorizationKnownGood(authorization),
            createContext: createContext.build,
            rateLimiter: deps.rateLimiter,
            scopeOf: (authorization) => deps.scopes.scopeOf(authorization),
            compressMinBytes: compression ? config.compression?.minBytes : undefined,
            report: requestReporter(telemetry),
            ...(metrics && { counted: (outcome: 'served' | 'handed_over') => metrics.hotPath(outcome) }),
            logger: deps.logger,
          },
          yoga,
        )
      : yoga;
  return Object.assign(yoga, { serveNode: hot });
}
