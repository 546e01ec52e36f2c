/**
 * `npm run sandbox`: the Merchant Wallet sandbox alone, seeded with the deterministic demo world.
 *
 *   npm run sandbox -- --port 8080 --auto-advance --deposits 100000
 *
 * Options: --port (or PORT; default 8080), --host (default 127.0.0.1), --auto-advance[=ms]
 * (default off; 3000 ms when given without a value), --wallets/--deposits/--withdrawals (size of
 * the first merchant's history), --latency (ms added to every /external request).
 * SANDBOX_ADMIN_TOKEN guards the admin API (default: sandbox-admin-token).
 */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { startAutoAdvance } from './auto-advance.ts';
import { DEFAULT_WORLD, DEMO_KEYS, seedWorld } from './seed.ts';
import { DEFAULT_ADMIN_TOKEN, startSandbox } from './server.ts';

function parseOptions() {
  try {
    return parseArgs({
      options: {
        port: { type: 'string' },
        host: { type: 'string', default: '127.0.0.1' },
        'auto-advance': { type: 'string' },
        wallets: { type: 'string' },
        deposits: { type: 'string' },
        withdrawals: { type: 'string' },
        latency: { type: 'string', default: '0' },
      },
      allowNegative: false,
      strict: true,
    });
  } catch (error) {
    console.error(`Invalid sandbox options: ${(error as Error).message}`);
    process.exit(2);
  }
}

const { values } = parseOptions();

const problems: string[] = [];
function integer(name: string, raw: string | undefined, fallback: number, min = 0): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min) {
    problems.push(`${name} must be an integer >= ${min}; received "${raw}"`);
    return fallback;
  }
  return value;
}

const port = integer('--port', values.port ?? process.env.PORT, 8080);
const autoAdvance = values['auto-advance'];
const autoAdvanceMs =
  autoAdvance === undefined ? 0 : integer('--auto-advance', autoAdvance || '3000', 3000, 1);
const world = {
  wallets: integer('--wallets', values.wallets, DEFAULT_WORLD.wallets, 1),
  deposits: integer('--deposits', values.deposits, DEFAULT_WORLD.deposits),
  withdrawals: integer('--withdrawals', values.withdrawals, DEFAULT_WORLD.withdrawals),
};
const latencyMs = integer('--latency', values.latency, 0);
if (problems.length) {
  console.error(`Invalid sandbox options:\n  - ${problems.join('\n  - ')}`);
  process.exit(2);
}

const logger = pino({ name: 'sandbox', level: process.env.LOG_LEVEL ?? 'info' });
const started = performance.now();
const { store } = seedWorld(world);
const running = await startSandbox({
  store,
  port,
  host: values.host,
  adminToken: process.env.SANDBOX_ADMIN_TOKEN ?? DEFAULT_ADMIN_TOKEN,
  logger,
  latencyMs,
});
const stopAdvance =
  autoAdvanceMs > 0 ? startAutoAdvance(store, { intervalMs: autoAdvanceMs, logger }) : () => {};
logger.info(
  { url: running.url, seedMs: Math.round(performance.now() - started), deposits: store.deposits.size },
  'sandbox listening',
);
console.log(`
Merchant Wallet sandbox at ${running.url}/external/v1
Demo keys (Authorization: Bearer <key>):
  Acme Coffee, read-write   ${DEMO_KEYS.acmeReadWrite}
  Acme Coffee, read-only    ${DEMO_KEYS.acmeReadOnly}
  Acme Coffee, revoked      ${DEMO_KEYS.acmeRevoked}
  Globex Travel, read-write ${DEMO_KEYS.globexReadWrite}
  Initech Labs (no withdrawal configuration) ${DEMO_KEYS.initechReadWrite}
Try: curl -H "Authorization: Bearer ${DEMO_KEYS.acmeReadWrite}" ${running.url}/external/v1/wallets
`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    stopAdvance();
    running.close().then(() => process.exit(0));
  });
}
