/**
 * `npm start`: the gateway at http://localhost:4000/graphql. Without UPSTREAM_URL it first starts
 * the embedded sandbox (seeded demo world, statuses advancing on a timer) on a free port and
 * fronts it. With WORKERS > 1 this process supervises that many gateway workers (cluster.ts).
 */
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { supervise } from './cluster.ts';
import { ConfigError, loadConfig } from './config.ts';
import { banner, startEmbeddedSandbox } from './embedded-sandbox.ts';
import { workerMetrics } from './observability/cluster-metrics.ts';
import { GatewayMetrics } from './observability/metrics.ts';
import { listenMetrics } from './observability/metrics-server.ts';
import { startTracing } from './observability/tracing.ts';
import { exampleTabs, loadExampleOperations } from './operations.ts';
import { createRateLimiter } from './plugins/rate-limit.ts';
import { loadManifest } from './plugins/trusted-documents.ts';
import {
  connectRedis,
  duplicateClient,
  replicaAckTimeoutMs,
  warnIfRedisEvicts,
  warnIfTooFewReplicas,
} from './redis/connection.ts';
import { fleetEvents, fleetInvalidation, fleetScopeSecret, keepFleetScopeSecret } from './redis/fleet.ts';
import { RedisHealth } from './redis/health.ts';
import { listen } from './server.ts';
import { createLogger } from './shared/logger.ts';
import { processLeases, redisLeases } from './subscriptions/leases.ts';
import { LivePolling, liveSettings } from './subscriptions/live.ts';
import { MerchantWalletClient } from './upstream/client.ts';
import { MemoryIdempotencyStore } from './withdrawals/idempotency-store.ts';
import { RedisIdempotencyStore } from './withdrawals/redis-idempotency-store.ts';
import { createGateway, gatewaySettings } from './yoga.ts';

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  throw error;
}

let manifest: Map<string, string>;
try {
  manifest = config.trustedDocuments.manifestPath
    ? loadManifest(config.trustedDocuments.manifestPath)
    : new Map();
} catch (error) {
  console.error(`Invalid configuration:\n  - PERSISTED_DOCUMENTS: ${(error as Error).message}`);
  process.exit(2);
}

const logger = createLogger(config.logLevel);
const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

if (cluster.isPrimary && config.workers > 1) {
  await supervise(config, logger);
} else {
  await serve();
}

/** One gateway process: alone, or one worker of `WORKERS`. */
async function serve(): Promise<void> {
  let upstreamURL = config.upstreamURL;
  let sandbox: Awaited<ReturnType<typeof startEmbeddedSandbox>> | undefined;
  if (!upstreamURL) {
    sandbox = await startEmbeddedSandbox(config, logger);
    upstreamURL = sandbox.url;
  }
  const demoKey = sandbox?.demoKey;

  // A fleet shares its state through Redis; one process keeps it in memory.
  const redis = config.redis ? await connectRedis(config.redis, logger) : undefined;
  if (redis) await warnIfRedisEvicts(redis, logger);
  if (redis && config.redis) await warnIfTooFewReplicas(redis, config.redis.minReplicaAcks, logger);
  // Whether Redis answers, watched in the background: requests never wait on a Redis that hangs.
  const redisHealth = redis && new RedisHealth(redis, logger);
  const stopWatchingRedis = redisHealth?.start();
  const invalidation = redis && fleetInvalidation(redis, logger, redisHealth);
  const metrics = config.metrics
    ? new GatewayMetrics({ maxOperationNames: config.metrics.maxOperationNames, processMetrics: true })
    : null;
  const tracing = config.tracing ? startTracing(config.tracing, { version: VERSION }) : null;
  const scopeSecret = redis && (await fleetScopeSecret(redis));
  const client = new MerchantWalletClient({
    ...config.upstream,
    baseURL: upstreamURL,
    ...(scopeSecret && { scopeSecret }),
    ...(invalidation && { onWithdrawal: invalidation.publish }),
    telemetry: { ...(metrics && { observer: metrics }), ...(tracing && { tracer: tracing.tracer }) },
  });
  metrics?.watchCircuits(() => client.circuits());
  if (redisHealth) metrics?.watchRedis(() => redisHealth.responsive);
  // The store's own connections, used in turn: a WAIT holds its connection until the replicas answer.
  const storeConnections = redis ? Array.from({ length: 4 }, () => duplicateClient(redis)) : [];
  await Promise.all(storeConnections.map((connection) => connection.connect()));
  const fleetStore =
    config.redis && storeConnections.length > 0
      ? new RedisIdempotencyStore(storeConnections, {
          maxKeysPerCaller: config.idempotencyMaxKeysPerCaller,
          minReplicaAcks: config.redis.minReplicaAcks,
          ackTimeoutMs: replicaAckTimeoutMs(config.redis),
          ...(redisHealth && { health: redisHealth }),
        })
      : undefined;
  const idempotencyStore =
    fleetStore ??
    new MemoryIdempotencyStore({
      maxKeys: config.idempotencyMaxKeys,
      maxKeysPerCaller: config.idempotencyMaxKeysPerCaller,
    });
  // Should Redis lose the scope secret, every replica ends up on one secret again.
  // Should Redis lose its data, the store learns when (reconciliation will not vouch for older intents).
  const stopKeepingSecret =
    redis &&
    scopeSecret &&
    fleetStore &&
    keepFleetScopeSecret(
      redis,
      scopeSecret,
      (s) => client.useScopeSecret(s),
      logger,
      undefined,
      () => fleetStore.markDataLoss(),
    );
  // A worker's scrape is the fleet's, summed by the supervisor (which serves METRICS_PORT itself).
  const scrape = metrics && (cluster.isWorker ? workerMetrics(metrics.registry) : metrics.scrape);
  const metricsServer =
    scrape && cluster.isPrimary && config.metrics?.port !== undefined
      ? await listenMetrics(scrape, { port: config.metrics.port, host: config.host })
      : undefined;
  const subscriber = await invalidation?.subscribe((scope) => client.invalidate(scope));
  // Subscriptions: in a fleet one replica polls each feed and Redis carries its news to the others.
  const liveEvents = redis && fleetEvents(redis, logger);
  const live = new LivePolling({
    client,
    events: liveEvents?.events ?? new EventTarget(),
    leases: redis ? redisLeases(redis, redisHealth) : processLeases,
    ...liveSettings(config),
    logger,
    metrics,
  });
  // News published while this process's Redis subscriber connection was down is read again.
  const stopWatchingDelivery = liveEvents?.watchDelivery(
    { lost: () => live.deliveryLost(), restored: () => void live.catchUp() },
    config.redis?.timeoutMs ?? 500,
  );
  const sandboxMode = !config.upstreamURL;
  const gateway = createGateway({
    client,
    logger,
    ...gatewaySettings(config),
    idempotencyStore,
    live,
    rateLimiter: config.rateLimitPerKey
      ? createRateLimiter(config.rateLimitPerKey, redis, redisHealth)
      : null,
    metrics,
    metricsEndpoint: config.metrics?.port === undefined ? scrape : null,
    trustedDocuments: { mode: config.trustedDocuments.mode, manifest },
    tracer: tracing?.tracer ?? null,
    graphiql: config.graphiql && {
      defaultQuery: loadExampleOperations(),
      defaultAuthorization: demoKey && `Bearer ${demoKey}`,
      ...(sandbox && {
        tabs: exampleTabs(
          sandbox.demo,
          JSON.stringify({ Authorization: `Bearer ${sandbox.demoKey}` }, null, 2),
        ),
      }),
    },
  });
  const running = await listen(gateway, {
    port: config.port,
    host: config.host,
    logger,
    maxRequestBytes: config.maxRequestBytes,
    edge: config.edge,
    scopeOf: (authorization) => client.scopeOf(authorization),
  }).catch((error: unknown) => {
    if ((error as { code?: string }).code !== 'EADDRINUSE') throw error;
    // Most often a second `npm start`: say what to do, not a stack trace.
    console.error(
      `Port ${config.port} is in use (another gateway?). Stop it, or choose another port: PORT=${config.port + 100} npm start`,
    );
    process.exit(1);
  });
  // A worker's supervisor announces the fleet once; a process alone announces itself.
  if (cluster.isPrimary) {
    logger.info(
      {
        url: `${running.url}/graphql`,
        upstream: sandboxMode ? 'embedded sandbox' : upstreamURL,
        metrics: metricsServer?.url ?? (scrape ? `${running.url}/metrics` : 'off'),
        tracing: config.tracing ? config.tracing.url : 'off',
      },
      'gateway listening',
    );
    console.log(
      banner(
        running.url,
        sandboxMode ? `embedded sandbox at ${upstreamURL}/external/v1` : String(upstreamURL),
        config.graphiql,
        demoKey,
      ),
    );
  }

  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'draining in-flight requests');
      // Subscriptions end first (their streams complete), so they do not hold the drain open.
      live.close();
      stopKeepingSecret?.();
      stopWatchingRedis?.();
      stopWatchingDelivery?.();
      running
        .close(config.shutdownTimeoutMs)
        .then(() => client.close())
        .then(() => metricsServer?.close())
        .then(() => tracing?.shutdown())
        .then(() => subscriber?.quit())
        .then(() => liveEvents?.subscriber.quit())
        .then(() => Promise.all(storeConnections.map((connection) => connection.quit())))
        .then(() => redis?.quit())
        .then(() => sandbox?.stop())
        .then(() => {
          logger.info('stopped');
          process.exit(0);
        })
        .catch((error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        });
    });
  }
}
