/**
 * `npm start`: the gateway at http://localhost:4000/graphql. Without UPSTREAM_URL it first starts
 * the embedded sandbox (seeded demo world, statuses advancing on a timer) on a free port and
 * fronts it. With WORKERS > 1 this process supervises that many gateway workers (cluster.ts), each
 * of which runs this file's `serve`.
 */
import cluster from 'node:cluster';
import { supervise } from './cluster.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { banner, startEmbeddedSandbox } from './embedded-sandbox.ts';
import { exampleTabs, loadExampleOperations } from './operations.ts';
import { connectRedis, warnIfRedisEvicts, warnIfTooFewReplicas } from './redis/connection.ts';
import { createGatewayRuntime } from './runtime.ts';
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
  const running = await runtime.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
    if ((error as { code?: string }).code !== 'EADDRINUSE') throw error;
    // Most often a second `npm start`: say what to do, not a stack trace.
    console.error(
      `Port ${config.port} is in use (another gateway?). Stop it, or choose another port: PORT=${config.port + 100} npm start`,
    );
    process.exit(1);
  });
  const sandboxMode = !config.upstreamURL;
  // A worker's supervisor announces the fleet once; a process alone announces itself.
  if (cluster.isPrimary) {
    logger.info(
      {
        url: `${running.url}/graphql`,
        upstream: sandboxMode ? 'embedded sandbox' : upstreamURL,
        metrics: runtime.metricsURL ?? (runtime.metrics ? `${running.url}/metrics` : 'off'),
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
      Promise.resolve(runtime[Symbol.asyncDispose]())
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
