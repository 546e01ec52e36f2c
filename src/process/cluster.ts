import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { superviseMetrics } from '../observability/cluster-metrics.ts';
import { listenMetrics } from '../observability/metrics-server.ts';
import { redisAddress, storeDescription } from '../redis/connection.ts';
import { banner, startEmbeddedSandbox } from './embedded-sandbox.ts';
import { RELEASE } from './release.ts';

/**
 * WORKERS > 1: this process only supervises. It forks that many gateway workers, which share one
 * port (node:cluster) and, through REDIS_URL, one state (config.ts refuses WORKERS > 1 without it).
 * In sandbox mode it also runs the embedded sandbox, once, and points the workers at it. A worker
 * that dies is replaced; SIGTERM/SIGINT is forwarded to every worker (a second one too), each
 * serves for its grace period and drains its in-flight requests, and the supervisor exits once
 * all have.
 */
export async function supervise(config: Config, logger: Logger): Promise<void> {
  const sandbox = config.upstreamURL ? undefined : await startEmbeddedSandbox(config, logger);
  const env = sandbox ? { UPSTREAM_URL: sandbox.url } : {};
  let stopping = false;
  let announced = false;

  // The fleet's metrics: summed from every worker, served by this process on METRICS_PORT.
  const scrape = config.metrics ? superviseMetrics() : undefined;
  const metricsServer =
    scrape && config.metrics?.port !== undefined
      ? await listenMetrics(scrape, { port: config.metrics.port, host: config.host })
      : undefined;
  const fork = (): Worker => cluster.fork(env);
  cluster.on('listening', (_worker, address) => {
    if (announced) return;
    announced = true;
    const host = ['0.0.0.0', '::', '127.0.0.1', '::1', null].includes(address.address)
      ? 'localhost'
      : address.address;
    const url = `http://${host}:${address.port}`;
    logger.info(
      {
        url: `${url}/graphql`,
        version: RELEASE,
        workers: config.workers,
        store: storeDescription(config.redis),
        ...(config.redis && { redis: redisAddress(config.redis) }),
      },
      'gateway listening',
    );
    // For a developer's terminal; production logs are JSON lines only.
    if (config.env !== 'production') {
      console.log(
        banner(
          url,
          sandbox ? `embedded sandbox at ${sandbox.url}/external/v1` : String(config.upstreamURL),
          config.graphiql,
          sandbox?.demoKey,
        ),
      );
    }
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) void finish();
      return;
    }
    logger.error({ pid: worker.process.pid, code, signal }, 'gateway worker died; starting another');
    // A short pause, so a worker that cannot start does not spin the supervisor.
    setTimeout(fork, 500).unref();
  });
  for (let i = 0; i < config.workers; i++) fork();

  const finish = async () => {
    await metricsServer?.close();
    await sandbox?.stop();
    logger.info('stopped');
    process.exit(0);
  };
  // Each worker keeps serving for its grace period, then drains (main.ts); a second signal is
  // passed on too, and ends their grace periods at once.
  let signalsForwarded = 0;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (signalsForwarded >= 2) return;
      signalsForwarded++;
      const workers = Object.values(cluster.workers ?? {});
      if (!stopping) {
        stopping = true;
        logger.info({ signal }, 'stopping workers');
        if (workers.length === 0) void finish();
      }
      for (const worker of workers) worker?.process.kill('SIGTERM');
    });
  }
}
