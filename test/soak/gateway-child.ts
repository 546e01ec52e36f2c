/**
 * The gateway as `npm run soak` runs it: the same wiring as src/main.ts in front of UPSTREAM_URL,
 * plus a memory sample sent to the parent over IPC every second (after a forced GC when the
 * process runs with --expose-gc, so heap figures are live data, not garbage).
 */
import { pino } from 'pino';
import { listen } from '../../src/server.ts';
import { DEFAULT_UPSTREAM_OPTIONS, MerchantWalletClient } from '../../src/upstream/client.ts';
import { createGateway } from '../../src/yoga.ts';

const upstreamURL = process.env.UPSTREAM_URL;
if (!upstreamURL) throw new Error('UPSTREAM_URL is required');
const client = new MerchantWalletClient({
  ...DEFAULT_UPSTREAM_OPTIONS,
  baseURL: upstreamURL,
  headersTimeoutMs: 2_000,
});
const gateway = createGateway({ client, logger: pino({ level: 'silent' }), graphiql: false });
const running = await listen(gateway, { port: 0, host: '127.0.0.1', logger: pino({ level: 'silent' }) });
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
