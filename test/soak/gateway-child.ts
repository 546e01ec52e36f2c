/**
 * The gateway as `npm run soak` runs it: started by createGatewayRuntime as src/main.ts starts it, in front of UPSTREAM_URL,
 * plus a memory sample sent to the parent over IPC every second (after a forced GC when the
 * process runs with --expose-gc, so heap figures are live data, not garbage).
 *
 * The idempotency store is bounded to SOAK_IDEMPOTENCY_KEYS (default 2 000) instead of the
 * production 100 000, so it is full before warm-up ends (later keyed withdrawals are refused
 * unsent: the store never evicts) and any growth after it is a leak, not a bounded structure
 * filling up.
 */
import { pino } from 'pino';
import { loadConfig } from '../../src/config/config.ts';
import { createGatewayRuntime } from '../../src/runtime.ts';
import { MemoryIdempotencyStore } from '../../src/withdrawals/memory-idempotency-store.ts';

const config = loadConfig();
const upstreamURL = config.upstreamURL;
if (!upstreamURL) throw new Error('UPSTREAM_URL is required');
const runtime = await createGatewayRuntime(
  { ...config, graphiql: false, metrics: undefined, tracing: undefined },
  {
    logger: pino({ level: 'silent' }),
    upstreamURL,
    upstream: { headersTimeoutMs: 2_000 },
    idempotencyStore: new MemoryIdempotencyStore({
      maxKeys: Number(process.env.SOAK_IDEMPOTENCY_KEYS ?? 2_000),
      maxKeysPerCaller: Number(process.env.SOAK_IDEMPOTENCY_KEYS ?? 2_000),
    }),
  },
);
const running = await runtime.listen({ port: 0, host: '127.0.0.1' });
process.send?.({ type: 'ready', url: running.url });
const timer = setInterval(() => {
  (globalThis as { gc?: () => void }).gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  process.send?.({ type: 'memory', rss, heapUsed, at: Date.now() });
}, 1_000);
process.once('SIGTERM', () => {
  clearInterval(timer);
  Promise.resolve(runtime[Symbol.asyncDispose]()).then(() => process.exit(0));
});
