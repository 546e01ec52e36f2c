/**
 * `npm start`: the gateway at http://localhost:4000/graphql (`--check-config`: only check the
 * environment). Without UPSTREAM_URL it first starts
 * the embedded sandbox (seeded demo world, statuses advancing on a timer) on a free port and
 * fronts it. With WORKERS > 1 this process supervises that many gateway workers (cluster.ts), each
 * of which runs this file's `serve`.
 */
import cluster from 'node:cluster';
import { type Config, ConfigError, loadConfig } from './config/config.ts';
import { supervise } from './process/cluster.ts';
import { banner, startEmbeddedSandbox } from './process/embedded-sandbox.ts';
import { exampleTabs, loadExampleOperations } from './process/graphiql-tabs.ts';
import { RELEASE } from './process/release.ts';
import {
  connectRedis,
  redisAddress,
  storeDescription,
  warnIfRedisEvicts,
  warnIfTooFewReplicas,
} from './redis/connection.ts';
import { createGatewayRuntime, type GatewayRuntime } from './runtime.ts';
import { createLogger } from './shared/logger.ts';

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  throw error;
}

const logger = createLogger(config.logLevel);

// `node src/main.ts --check-config`: validates the environment (exit 2 with every problem, as a
// start would) and exits 0 without starting anything: no port, no Redis, no REST call.
if (process.argv.includes('--check-config')) {
  logger.info({ version: RELEASE, store: storeDescription(config.redis) }, 'configuration is valid');
  process.exit(0);
}

try {
  if (cluster.isPrimary && config.workers > 1) await supervise(config, logger);
  else await serve();
} catch (error) {
  // What an operator can fix says so in one line, not a stack trace.
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  const inUse = portInUse(error);
  if (!inUse) throw error;
  console.error(inUse);
  process.exit(1);
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

  const runtime = await createGatewayRuntime(config, {
    logger,
    upstreamURL,
    redis,
    graphiql: {
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
  const running = await runtime.listen({ port: config.port, host: config.host });
  const sandboxMode = !config.upstreamURL;
  // A worker's supervisor announces the fleet once; a process alone announces itself.
  if (cluster.isPrimary) {
    logger.info(
      {
        url: `${running.url}/graphql`,
        version: RELEASE,
        upstream: sandboxMode ? 'embedded sandbox' : upstreamURL,
        store: runtime.store,
        ...(redis && config.redis && { redis: redisAddress(config.redis) }),
        metrics: runtime.metricsURL ?? (runtime.metrics ? `${running.url}/metrics` : 'off'),
        tracing: config.tracing ? config.tracing.url : 'off',
      },
      'gateway listening',
    );
    // For a developer's terminal; production logs are JSON lines only, and the line above says it all.
    if (config.env !== 'production') {
      console.log(
        banner(
          running.url,
          sandboxMode ? `embedded sandbox at ${upstreamURL}/external/v1` : String(upstreamURL),
          config.graphiql,
          demoKey,
        ),
      );
    }
  }

  shutDownOnSignals(runtime, async () => {
    await runtime[Symbol.asyncDispose]();
    await redis?.quit();
    await sandbox?.stop();
  });
}

/** How long the steps after the connections' drain may take before the process exits all the same. */
const SHUTDOWN_BACKSTOP_MS = 5_000;

/**
 * SIGTERM or SIGINT: /readyz answers 503 at once while every request, and every new connection,
 * is still served for SHUTDOWN_GRACE_MS, so that a load balancer takes the process out before its
 * listener closes; then the listener closes, in-flight requests drain (within
 * SHUTDOWN_TIMEOUT_MS) and the process exits 0, or 1 when stopping takes 5 s past that. A second
 * signal during the grace period ends it at once (a developer's second Ctrl-C); in-flight
 * requests still finish.
 */
function shutDownOnSignals(runtime: GatewayRuntime, stop: () => Promise<void>): void {
  let phase: 'serving' | 'grace' | 'draining' = 'serving';
  let endGrace = () => {};
  const drain = (signal: NodeJS.Signals) => {
    phase = 'draining';
    logger.info({ signal }, 'draining in-flight requests');
    // Connections are cut at SHUTDOWN_TIMEOUT_MS; what follows (Redis's QUIT, the last spans'
    // export, the sandbox) is bounded too, so no step that hangs keeps a stopped process alive
    // until the orchestrator's SIGKILL.
    const backstopMs = config.shutdownTimeoutMs + SHUTDOWN_BACKSTOP_MS;
    setTimeout(() => {
      logger.error({ backstopMs }, 'shutdown did not finish within SHUTDOWN_TIMEOUT_MS + 5 s; exiting');
      process.exit(1);
    }, backstopMs).unref();
    stop()
      .then(() => {
        logger.info('stopped');
        process.exit(0);
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (phase === 'draining') return;
    if (phase === 'grace') {
      logger.info({ signal }, 'second signal: ending the grace period');
      endGrace();
      return;
    }
    phase = 'grace';
    runtime.beginShutdown();
    const graceMs = config.shutdownGraceMs;
    if (graceMs === 0) {
      drain(signal);
      return;
    }
    logger.info(
      { signal, graceMs },
      'shutting down: /readyz answers 503; serving everything for the grace period (SHUTDOWN_GRACE_MS)',
    );
    const timer = setTimeout(() => drain(signal), graceMs);
    endGrace = () => {
      clearTimeout(timer);
      drain(signal);
    };
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/**
 * The line to print when a port the configuration names is taken (most often by a second
 * `npm start`, or another exporter on METRICS_PORT): which variable, and what to do.
 */
function portInUse(error: unknown): string | undefined {
  const { code, port } = error as { code?: string; port?: number };
  if (code !== 'EADDRINUSE' || port === undefined) return undefined;
  if (port === config.port) {
    return `Port ${port} is in use (another gateway?). Stop it, or choose another port: PORT=${port + 100} npm start`;
  }
  if (port === config.metrics?.port) {
    return `METRICS_PORT ${port} is in use (another gateway, or another exporter?). Stop it, or choose another port: METRICS_PORT=${port + 1}, or METRICS_PORT=same to serve /metrics on PORT`;
  }
  if (port === config.sandbox.port) {
    return `SANDBOX_PORT ${port} is in use (another embedded sandbox?). Stop it, or leave SANDBOX_PORT unset for a free port`;
  }
  return undefined;
}
