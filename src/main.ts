/**
 * `npm start`: the gateway at http://localhost:4000/graphql. Without UPSTREAM_URL it first starts
 * the embedded sandbox (seeded demo world, statuses advancing on a timer) on a free port and
 * fronts it. This is the only gateway file that knows the sandbox exists.
 */
import { ConfigError, loadConfig } from './config.ts';
import { loadExampleOperations } from './operations.ts';
import { createRateLimiter } from './plugins/rate-limit.ts';
import { connectRedis, fleetInvalidation, fleetScopeSecret } from './redis.ts';
import { listen } from './server.ts';
import { createLogger } from './shared/logger.ts';
import { MerchantWalletClient } from './upstream/client.ts';
import { MemoryIdempotencyStore } from './withdrawals/idempotency-store.ts';
import { RedisIdempotencyStore } from './withdrawals/redis-idempotency-store.ts';
import { createGateway } from './yoga.ts';

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

const logger = createLogger(config.logLevel);

let upstreamURL = config.upstreamURL;
let stopSandbox = async () => {};
let demoKey: string | undefined;
if (!upstreamURL) {
  // Loaded only in sandbox mode: a gateway fronting the real API never loads the sandbox's code.
  const [{ startAutoAdvance }, { DEMO_KEYS, seedWorld }, { startSandbox }, { DEFAULT_ADMIN_TOKEN }] =
    await Promise.all([
      import('./sandbox/auto-advance.ts'),
      import('./sandbox/seed.ts'),
      import('./sandbox/http/server.ts'),
      import('./sandbox/config.ts'),
    ]);
  demoKey = DEMO_KEYS.acmeReadWrite;
  const { store } = seedWorld();
  const sandbox = await startSandbox({
    store,
    port: config.sandbox.port,
    adminToken: config.sandbox.adminToken ?? DEFAULT_ADMIN_TOKEN,
    logger: logger.child({ component: 'sandbox' }),
  });
  const stopAdvance =
    config.sandbox.autoAdvanceMs > 0
      ? startAutoAdvance(store, { intervalMs: config.sandbox.autoAdvanceMs, logger })
      : () => {};
  stopSandbox = async () => {
    stopAdvance();
    await sandbox.close();
  };
  upstreamURL = sandbox.url;
  logger.info({ url: sandbox.url }, 'embedded sandbox started');
}

// A fleet shares its state through Redis; one process keeps it in memory.
const redis = config.redisURL ? await connectRedis(config.redisURL, logger) : undefined;
const invalidation = redis && fleetInvalidation(redis, logger);
const client = new MerchantWalletClient({
  ...config.upstream,
  baseURL: upstreamURL,
  ...(redis && { scopeSecret: await fleetScopeSecret(redis) }),
  ...(invalidation && { onWithdrawal: invalidation.publish }),
});
const subscriber = await invalidation?.subscribe((scope) => client.invalidate(scope));
const idempotencyStore = redis
  ? new RedisIdempotencyStore(redis)
  : new MemoryIdempotencyStore({ maxEntries: config.idempotencyMaxKeys });
const sandboxMode = !config.upstreamURL;
const gateway = createGateway({
  client,
  logger,
  introspection: config.introspection,
  limits: config.queryLimits,
  maxRequestBytes: config.maxRequestBytes,
  requestDeadlineMs: config.requestDeadlineMs,
  idempotencyLeaseMs: config.idempotencyLeaseMs,
  maxUpstreamCallsPerRequest: config.maxUpstreamCallsPerRequest,
  queryDeduplication: config.queryDeduplication,
  idempotencyStore,
  rateLimiter: config.rateLimitPerKey ? createRateLimiter(config.rateLimitPerKey, redis) : null,
  graphiql: config.graphiql && {
    defaultQuery: loadExampleOperations(),
    defaultAuthorization: demoKey && `Bearer ${demoKey}`,
  },
});
const running = await listen(gateway, { port: config.port, host: config.host, logger });
logger.info(
  { url: `${running.url}/graphql`, upstream: sandboxMode ? 'embedded sandbox' : upstreamURL },
  'gateway listening',
);
console.log(`
Merchant Wallet GraphQL gateway: ${running.url}/graphql${config.graphiql ? '  (open it in a browser for GraphiQL)' : ''}
Upstream: ${sandboxMode ? `embedded sandbox at ${upstreamURL}/external/v1` : upstreamURL}
${
  demoKey
    ? `Demo key (Acme Coffee, read-write): ${demoKey}
Try: curl -H "Authorization: Bearer ${demoKey}" -H 'content-type: application/json' \\
       -d '{"query":"{ wallets(first: 5) { nodes { address assets { currencyCode balance { availableAmount } } } } }"}' \\
       ${running.url}/graphql
`
    : ''
}`);

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining in-flight requests');
    running
      .close(config.shutdownTimeoutMs)
      .then(() => client.close())
      .then(() => subscriber?.quit())
      .then(() => redis?.quit())
      .then(() => stopSandbox())
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
