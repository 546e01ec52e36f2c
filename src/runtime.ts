import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Config } from './config/config.ts';
import { createWalletIndexing, type WalletIndexing } from './loaders/index-builds.ts';
import { workerMetrics } from './observability/cluster-metrics.ts';
import { GatewayMetrics, type Scrape } from './observability/metrics.ts';
import { listenMetrics } from './observability/metrics-server.ts';
import { startTracing } from './observability/tracing.ts';
import { type Compression, useCompression } from './plugins/compression.ts';
import type { DocumentCache } from './plugins/document-cache.ts';
import { combinedRateLimiter, createRateLimiter, type RateLimiter } from './plugins/rate-limit.ts';
import type { PersistedQueryRegistry } from './plugins/trusted-documents.ts';
import { RELEASE } from './process/release.ts';
import {
  duplicateClient,
  type RedisClient,
  replicaAckTimeoutMs,
  storeDescription,
} from './redis/connection.ts';
import { fleetEvents, fleetInvalidation, fleetScopeSecret, keepFleetScopeSecret } from './redis/fleet.ts';
import { RedisHealth } from './redis/health.ts';
import { redisMerchantRecords } from './redis/merchant-records.ts';
import { redisIndexChunks } from './redis/wallet-index-chunks.ts';
import { listen, type RunningServer } from './server.ts';
import { processLeases, redisLeases } from './subscriptions/leases.ts';
import { LivePolling } from './subscriptions/live.ts';
import { CallerScopes } from './upstream/caller-scope.ts';
import { type Callers, createCallers } from './upstream/callers.ts';
import { MerchantWalletClient } from './upstream/client.ts';
import type { IdempotencyStore } from './withdrawals/idempotency-store.ts';
import { MemoryIdempotencyStore } from './withdrawals/memory-idempotency-store.ts';
import { RedisIdempotencyStore } from './withdrawals/redis-idempotency-store.ts';
import { WithdrawalService } from './withdrawals/service.ts';
import { createGateway, type Gateway, type GraphiQLDefaults } from './yoga.ts';

/**
 * What the composition root takes from outside the gateway: where the REST API is, the fleet's
 * Redis once connected, the logger, and any parts a test built itself (PrebuiltParts). main.ts, the
 * test support and the soak child all start the gateway through createGatewayRuntime, so what the
 * tests run is what production runs.
 */
export type GatewayInfrastructure = InfrastructureBase & PrebuiltParts & UpstreamSource;

/** Where the REST API is: its base URL (UPSTREAM_URL, or the embedded sandbox's), or a client made for it. */
type UpstreamSource =
  | { upstreamURL: string; client?: undefined }
  | {
      upstreamURL?: undefined;
      /** A client a test built; the runtime takes its `scopes`, and `upstream` and `clock` do not apply. */
      client: MerchantWalletClient;
    };

/** Parts a test built, each in place of the configuration's; whoever built one closes it. */
export interface PrebuiltParts {
  /** Callers' scopes (two runtimes as replicas of one fleet share a secret); with `client`, its own. */
  scopes?: CallerScopes;
  idempotencyStore?: IdempotencyStore;
  tracer?: Tracer;
  metrics?: GatewayMetrics;
  live?: LivePolling;
  rateLimiter?: RateLimiter;
  compression?: Compression;
  documentCache?: DocumentCache;
  persistedQueries?: PersistedQueryRegistry;
}

interface InfrastructureBase {
  logger: Logger;
  /** The fleet's Redis, connected (connectRedis); absent: every store in this process. */
  redis?: RedisClient | undefined;
  /** GraphiQL's first screen (example operations, the sandbox's demo key and tabs), when GRAPHIQL is on. */
  graphiql?: GraphiQLDefaults;
  /** Event loop, memory and GC metrics; off where several gateways share one process (tests). */
  processMetrics?: boolean;
  /** The upstream client's clock (tests move time for the circuit breaker and the micro-cache). */
  clock?: () => number;
  /** Settings of the upstream client past the configuration's (tests: faster retries, say). */
  upstream?: Partial<Config['upstream']>;
}

export interface GatewayRuntime extends AsyncDisposable {
  /** The GraphQL gateway as a fetch-style handler (tests call `gateway.fetch`). */
  readonly gateway: Gateway;
  readonly client: MerchantWalletClient;
  /** The Caller of each request, poll and background call (its deadline and call budget). */
  readonly callers: Callers;
  /** Callers' scopes, the one object the client, the server and the rate limit count by. */
  readonly scopes: CallerScopes;
  readonly live: LivePolling;
  readonly withdrawals: WithdrawalService;
  readonly idempotencyStore: IdempotencyStore;
  /** The wallet indexes and their background builds; undefined when WALLET_INDEX_MAX_BYTES is 0. */
  readonly walletIndexing: WalletIndexing | undefined;
  /** Prometheus metrics; null when METRICS=false. */
  readonly metrics: GatewayMetrics | null;
  /** Where METRICS_PORT serves /metrics, when it does (in a fleet: the supervisor's, not a worker's). */
  readonly metricsURL: string | undefined;
  /** Where the state a fleet shares is kept, in words (storeDescription); /readyz says it too. */
  readonly store: string;
  /** Serves the gateway over HTTP and WebSocket; disposing of the runtime drains it first. */
  listen(options: { port: number; host: string }): Promise<RunningServer>;
  /**
   * A shutdown's first step (SIGTERM): /readyz answers 503 while everything is still served, each
   * answer closing its connection; the caller disposes of the runtime SHUTDOWN_GRACE_MS later.
   */
  beginShutdown(): void;
}

const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/**
 * Builds the gateway's parts from `config` in dependency order; disposing of the runtime takes them
 * down backwards, and a step that fails takes down what was built before it.
 */
export async function createGatewayRuntime(
  config: Config,
  infrastructure: GatewayInfrastructure,
): Promise<GatewayRuntime> {
  const { logger, redis } = infrastructure;
  const stack = new AsyncDisposableStack();
  try {
    // Whether Redis answers, watched in the background: requests never wait on a Redis that hangs.
    const redisHealth = redis && new RedisHealth(redis, logger);
    const stopWatchingRedis = redisHealth?.start();
    if (stopWatchingRedis) stack.defer(stopWatchingRedis);
    const invalidation = redis && fleetInvalidation(redis, logger, redisHealth);

    const metrics =
      infrastructure.metrics ??
      (config.metrics
        ? new GatewayMetrics({
            maxOperationNames: config.metrics.maxOperationNames,
            processMetrics: infrastructure.processMetrics ?? true,
          })
        : null);
    const tracing =
      !infrastructure.tracer && config.tracing ? startTracing(config.tracing, { version: VERSION }) : null;
    if (tracing) stack.defer(() => tracing.shutdown());
    const tracer = infrastructure.tracer ?? tracing?.tracer ?? null;

    // One secret for the fleet, so that every replica gives a key the same scope.
    const scopeSecret = redis && (await fleetScopeSecret(redis));
    const scopes = infrastructure.client?.scopes ?? infrastructure.scopes ?? new CallerScopes(scopeSecret);
    let client: MerchantWalletClient;
    if (infrastructure.client) client = infrastructure.client;
    else {
      const built = new MerchantWalletClient(
        {
          ...config.upstream,
          ...infrastructure.upstream,
          // Kept results' share of the cache's bound, unused without query deduplication.
          ...(!config.queryDeduplication && { keptResultsShare: 0 }),
          baseURL: infrastructure.upstreamURL,
          scopes,
          ...(redis && { merchantRecords: redisMerchantRecords(redis, logger) }),
          ...(invalidation && { onWithdrawal: invalidation.publish }),
          telemetry: { ...(metrics && { observer: metrics }), ...(tracer && { tracer }) },
        },
        infrastructure.clock,
      );
      stack.defer(() => built.close());
      client = built;
    }
    const callers = createCallers(client, config);
    metrics?.watchCircuits(() => client.circuits());
    if (redisHealth) metrics?.watchRedis(() => redisHealth.responsive);

    // The store's own connections, used in turn: a WAIT holds its connection until the replicas answer.
    const storeConnections =
      redis && config.redis && !infrastructure.idempotencyStore
        ? Array.from({ length: 4 }, () => duplicateClient(redis))
        : [];
    stack.defer(() => Promise.all(storeConnections.map((connection) => connection.quit())).then(() => {}));
    await Promise.all(storeConnections.map((connection) => connection.connect()));
    const fleetStore =
      config.redis && storeConnections.length > 0
        ? new RedisIdempotencyStore(storeConnections, {
            maxKeysPerCaller: config.idempotencyMaxKeysPerCaller,
            minReplicaAcks: config.redis.minReplicaAcks,
            ackTimeoutMs: replicaAckTimeoutMs(config.redis),
            ...(redisHealth && { health: redisHealth }),
            ...(metrics && { onEvicted: () => metrics.idempotency('evicted_refusal') }),
          })
        : undefined;
    const idempotencyStore =
      infrastructure.idempotencyStore ??
      fleetStore ??
      new MemoryIdempotencyStore({
        maxKeys: config.idempotencyMaxKeys,
        maxKeysPerCaller: config.idempotencyMaxKeysPerCaller,
        groupOf: (scope) => client.merchants.of(scope),
        ...(metrics && { onEvicted: () => metrics.idempotency('evicted_refusal') }),
      });
    // Should Redis lose the scope secret, every replica ends up on one secret again.
    // Should Redis lose its data, the store learns when (reconciliation will not vouch for older intents).
    if (redis && scopeSecret && fleetStore) {
      stack.defer(
        keepFleetScopeSecret(
          redis,
          scopeSecret,
          (secret) => scopes.useSecret(secret),
          logger,
          undefined,
          () => fleetStore.markDataLoss(),
        ),
      );
    }

    // A worker's scrape is the fleet's, summed by the supervisor (which serves METRICS_PORT itself).
    const scrape: Scrape | null =
      metrics && (cluster.isWorker ? workerMetrics(metrics.registry) : metrics.scrape);
    const metricsServer =
      scrape && cluster.isPrimary && config.metrics?.port !== undefined
        ? await listenMetrics(scrape, { port: config.metrics.port, host: config.host })
        : undefined;
    if (metricsServer) stack.defer(() => metricsServer.close());

    const subscriber = await invalidation?.subscribe((scope) => client.invalidateScope(scope));
    if (subscriber) stack.defer(() => subscriber.quit().then(() => {}));

    const live =
      infrastructure.live ??
      livePolling(config, stack, { client, callers, redis, redisHealth, logger, metrics });

    const withdrawals = new WithdrawalService(
      client,
      idempotencyStore,
      {
        leaseMs: config.idempotencyLeaseMs,
        reconcile: { ...config.reconcile, pageSize: RECONCILE_PAGE_SIZE },
      },
      { logger, ...(metrics && { metrics }), ...(tracer && { tracer }) },
    );

    const store = storeDescription(redis ? config.redis : undefined);
    let shuttingDown = false;
    const servers: RunningServer[] = [];

    // Wallet indexes: built in the background from the merchants' own requests; stopped at shutdown.
    const walletIndexing = createWalletIndexing(client, {
      ...config.walletIndex,
      callers,
      logger,
      // A fleet shares what its replicas built (redis/wallet-index-chunks.ts).
      chunks: redis && redisIndexChunks(redis, logger),
    });
    if (walletIndexing) stack.defer(() => walletIndexing.builds.close());
    // A key's group named anew (learnt, or merged under a lesser tag): its index goes with it.
    if (walletIndexing) client.merchants.retagged.add((from, to) => walletIndexing.indexes.move(from, to));

    const gateway = createGateway(config, {
      walletIndexing,
      client,
      callers,
      scopes,
      logger,
      live,
      withdrawals,
      idempotencyStore,
      rateLimiter:
        infrastructure.rateLimiter ??
        combinedRateLimiter(
          config.rateLimitPerKey ? createRateLimiter(config.rateLimitPerKey, redis, redisHealth) : null,
          config.rateLimitPerMerchant
            ? createRateLimiter(config.rateLimitPerMerchant, redis, redisHealth, 'mwg:rate-merchant')
            : null,
          (scope) => client.merchants.of(scope),
        ),
      compression:
        infrastructure.compression ?? (config.compression ? useCompression(config.compression) : undefined),
      ...(infrastructure.documentCache && { documentCache: infrastructure.documentCache }),
      ...(infrastructure.persistedQueries && { persistedQueries: infrastructure.persistedQueries }),
      metrics,
      metricsEndpoint: config.metrics?.port === undefined ? scrape : null,
      tracer,
      graphiql: config.graphiql && (infrastructure.graphiql ?? {}),
      readiness: { release: RELEASE, store, shuttingDown: () => shuttingDown },
    });

    const owned = stack.move();
    return {
      gateway,
      client,
      callers,
      scopes,
      live,
      withdrawals,
      walletIndexing,
      idempotencyStore,
      metrics,
      metricsURL: metricsServer?.url,
      store,
      async listen(options) {
        const running = await listen(gateway, {
          ...options,
          logger,
          maxRequestBytes: config.maxRequestBytes,
          edge: config.edge,
          scopes,
          keys: { evidence: client, callers },
        });
        owned.defer(() => running.close(config.shutdownTimeoutMs));
        // Streams are interrupted first: clients resume elsewhere, and none holds the drain open.
        // A handed-in live polling is its builder's to close.
        if (!infrastructure.live) owned.defer(() => live.close());
        servers.push(running);
        if (shuttingDown) running.closeConnectionsAfterAnswer();
        return running;
      },
      beginShutdown() {
        shuttingDown = true;
        for (const running of servers) running.closeConnectionsAfterAnswer();
      },
      [Symbol.asyncDispose]: () => owned.disposeAsync(),
    };
  } catch (error) {
    await stack.disposeAsync();
    throw error;
  }
}

/** Intents read per page when reconciling: most windows in one call, still cheap. */
const RECONCILE_PAGE_SIZE = 100;

/**
 * Subscriptions' pollers: in a fleet one replica polls each feed and Redis carries its news to the
 * others. Their shutdown goes on `stack`.
 */
function livePolling(
  config: Config,
  stack: AsyncDisposableStack,
  parts: {
    client: MerchantWalletClient;
    callers: Callers;
    redis: RedisClient | undefined;
    redisHealth: RedisHealth | undefined;
    logger: Logger;
    metrics: GatewayMetrics | null;
  },
): LivePolling {
  const { redis, logger } = parts;
  const liveEvents = redis && fleetEvents(redis, logger);
  if (liveEvents) stack.defer(() => liveEvents.subscriber.quit().then(() => {}));
  const live = new LivePolling({
    client: parts.client,
    callers: parts.callers,
    events: liveEvents?.events ?? new EventTarget(),
    leases: redis ? redisLeases(redis, parts.redisHealth) : processLeases,
    ...config.subscriptions,
    logger,
    metrics: parts.metrics,
  });
  stack.defer(() => live.close());
  // News published while this process's Redis subscriber connection was down is read again.
  const stopWatchingDelivery = liveEvents?.watchDelivery(
    { lost: () => live.deliveryLost(), restored: () => void live.catchUp() },
    config.redis?.timeoutMs ?? 500,
  );
  if (stopWatchingDelivery) stack.defer(stopWatchingDelivery);
  return live;
}
