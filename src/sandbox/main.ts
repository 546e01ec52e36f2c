/**
 * `npm run sandbox`: the Merchant Wallet sandbox alone, seeded with the deterministic demo world.
 * Options and environment: see config.ts.
 */
import { createLogger } from '../shared/logger.ts';
import { startAutoAdvance } from './auto-advance.ts';
import { loadSandboxConfig, type SandboxConfig, SandboxConfigError } from './config.ts';
import { startDemoActivity } from './demo.ts';
import { startSandbox } from './http/server.ts';
import { DEMO_KEYS, seedWorld } from './seed.ts';

let config: SandboxConfig;
try {
  config = loadSandboxConfig();
} catch (error) {
  if (!(error instanceof SandboxConfigError)) throw error;
  console.error(error.message);
  process.exit(2);
}

const logger = createLogger(config.logLevel).child({ name: 'sandbox' });
const started = performance.now();
const { store, merchants } = seedWorld(config.world);
const running = await startSandbox({
  store,
  port: config.port,
  host: config.host,
  adminToken: config.adminToken,
  logger,
  latencyMs: config.latencyMs,
  idempotencyExtension: config.idempotencyExtension,
});
const stopAdvance =
  config.autoAdvanceMs > 0 ? startAutoAdvance(store, { stepMs: config.autoAdvanceMs, logger }) : () => {};
const stopDeposits =
  config.depositEveryMs > 0
    ? startDemoActivity(store, { merchantId: merchants.acme.id, everyMs: config.depositEveryMs, logger })
    : () => {};
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
    stopDeposits();
    running.close().then(() => process.exit(0));
  });
}
