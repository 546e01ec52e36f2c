/**
 * The gateway as `npm run soak` runs it: the same wiring as src/main.ts in front of UPSTREAM_URL,
 * plus a memory sample sent to the parent over IPC every second (after a forced GC when the
 * process runs with --expose-gc, so heap figures are live data, not garbage).
 *
 * The idempotency store is bounded to SOAK_IDEMPOTENCY_KEYS (default 2 000) instead of the
 * production 100 000, so it is full before warm-up ends (later keyed withdrawals are refused
 * unsent: the store never evicts) and any growth after it is a leak, not a bounded structure
 * filling up.
 */
import { pino } from 'pino';
import { loadConfig } from '../../src/config.ts';
import { listen } from '../../src/server.ts';
import { processLeases } from '../../src/subscriptions/leases.ts';
import { LivePolling, liveSettings } from '../../src/subscriptions/live.ts';
import { MerchantWalletClient } from '../../src/upstream/client.ts';
import { MemoryIdempotencyStore } from '../../src/withdrawals/idempotency-store.ts';
import { createGateway, gatewaySettings } from '../../src/yoga.ts';

const config = loadConfig();
const upstreamURL = config.upstreamURL;
if (!upstreamURL) throw new Error('UPSTREAM_URL is required');
const client = new MerchantWalletClient({
  ...config.upstream,
  baseURL: upstreamURL,
  headersTimeoutMs: 2_000,
});
const idempotencyStore = new MemoryIdempotencyStore({
  maxKeys: Number(process.env.SOAK_IDEMPOTENCY_KEYS ?? 2_000),
  maxKeysPerCaller: Number(process.env.SOAK_IDEMPOTENCY_KEYS ?? 2_000),
});
const gateway = createGateway({
  client,
  logger: pino({ level: 'silent' }),
  graphiql: false,
  idempotencyStore,
  live: new LivePolling({
    client,
    logger: pino({ level: 'silent' }),
    events: new EventTarget(),
    leases: processLeases,
    ...liveSettings(config),
    metrics: null,
  }),
  ...gatewaySettings(config),
  rateLimiter: null,
  metrics: null,
  metricsEndpoint: null,
  tracer: null,
  trustedDocuments: { mode: 'off', manifest: new Map() },
});
const running = await listen(gateway, {
  port: 0,
  host: '127.0.0.1',
  logger: pino({ level: 'silent' }),
  maxRequestBytes: config.maxRequestBytes,
  edge: config.edge,
  scopeOf: (authorization) => client.scopeOf(authorization),
});
process.send?.({ type: 'ready', url: running.url });
const timer = setInterval(() => {
  (globalThis as { gc?: () => void }).gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  process.send?.({ type: 'memory', rss, heapUsed, at: Date.now() });
}, 1_000);
process.once('SIGTERM', () => {
  clearInterval(timer);
  running
    .close(5_000)
    .then(() => client.close())
    .then(() => process.exit(0));
});
