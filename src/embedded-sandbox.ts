import type { Logger } from 'pino';
import type { Config } from './config.ts';

/**
 * The embedded sandbox of `npm start` without UPSTREAM_URL (seeded demo world, statuses advancing on
 * a timer), on a free port. Start-up wiring, like main.ts: with cluster.ts, the only gateway files
 * that know the sandbox exists. Loaded only in sandbox mode: a gateway fronting the real API never
 * loads the sandbox's code.
 */
export async function startEmbeddedSandbox(
  config: Config,
  logger: Logger,
): Promise<{ url: string; demoKey: string; stop(): Promise<void> }> {
  const [{ startAutoAdvance }, { DEMO_KEYS, seedWorld }, { startSandbox }, { DEFAULT_ADMIN_TOKEN }] =
    await Promise.all([
      import('./sandbox/auto-advance.ts'),
      import('./sandbox/seed.ts'),
      import('./sandbox/http/server.ts'),
      import('./sandbox/config.ts'),
    ]);
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
  logger.info({ url: sandbox.url }, 'embedded sandbox started');
  return {
    url: sandbox.url,
    demoKey: DEMO_KEYS.acmeReadWrite,
    async stop() {
      stopAdvance();
      await sandbox.close();
    },
  };
}

/** What `npm start` prints once the gateway listens. */
export function banner(
  gatewayURL: string,
  upstream: string,
  graphiql: boolean,
  demoKey: string | undefined,
): string {
  return `
Merchant Wallet GraphQL gateway: ${gatewayURL}/graphql${graphiql ? '  (open it in a browser for GraphiQL)' : ''}
Upstream: ${upstream}
${
  demoKey
    ? `Demo key (Acme Coffee, read-write): ${demoKey}
Try: curl -H "Authorization: Bearer ${demoKey}" -H 'content-type: application/json' \\
       -d '{"query":"{ wallets(first: 5) { nodes { address assets { currencyCode balance { availableAmount } } } } }"}' \\
       ${gatewayURL}/graphql
`
    : ''
}`;
}
