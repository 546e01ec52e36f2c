/**
 * The gateway as src/main.ts starts it (one process, the environment's configuration), with each
 * key's share of the REST API set by BENCH_CALLS_PER_KEY (src/upstream/fair-share.ts; 0 turns it
 * off) and its whole-list walks at once by BENCH_WALKS_PER_KEY (src/plugins/limits.ts; 0: no
 * wait), for `npm run bench -- --neighbour`, which compares them side by side. Prints
 * `gateway: <url>/graphql` when it listens; SIGTERM stops it.
 */
import { loadConfig } from '../../src/config.ts';
import { createGatewayRuntime } from '../../src/runtime.ts';
import { createLogger } from '../../src/shared/logger.ts';

const loaded = loadConfig();
const walksPerKey = Number(process.env.BENCH_WALKS_PER_KEY ?? 'NaN');
const config = Number.isFinite(walksPerKey)
  ? { ...loaded, queryLimits: { ...loaded.queryLimits, walksPerKey } }
  : loaded;
const upstreamURL = config.upstreamURL;
if (!upstreamURL) throw new Error('UPSTREAM_URL is required');
const callsPerKey = Number(process.env.BENCH_CALLS_PER_KEY ?? 'NaN');
const runtime = await createGatewayRuntime(config, {
  logger: createLogger(config.logLevel),
  upstreamURL,
  ...(Number.isFinite(callsPerKey) && { upstream: { fairShare: { callsPerKey } } }),
});
const running = await runtime.listen({ port: config.port, host: config.host });
console.log(`gateway: ${running.url}/graphql`);
process.once('SIGTERM', () => {
  void runtime[Symbol.asyncDispose]().then(() => process.exit(0));
});
