import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { globalIdOf } from './global-ids.ts';
import type { DemoVariables } from './operations.ts';

/**
 * The embedded sandbox of `npm start` without UPSTREAM_URL (seeded demo world, statuses advancing on
 * a timer), on a free port. Start-up wiring, like main.ts: with cluster.ts, the only gateway files
 * that know the sandbox exists. Loaded only in sandbox mode: a gateway fronting the real API never
 * loads the sandbox's code.
 */
export async function startEmbeddedSandbox(
  config: Config,
  logger: Logger,
): Promise<{ url: string; demoKey: string; demo: DemoVariables; stop(): Promise<void> }> {
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
  // GraphiQL's examples run at once: a real wallet of the demo merchant, read as a client would.
  const wallets = await fetch(`${sandbox.url}/external/v1/wallets?size=1`, {
    headers: { authorization: `Bearer ${DEMO_KEYS.acmeReadWrite}` },
  });
  const walletRestId = ((await wallets.json()) as { data: { id: string }[] }).data[0]?.id ?? '';
  // ...and a withdrawal to watch live: one still in flight, which the auto-advance will move on.
  const newestIntent = async (filter: string) => {
    const page = await fetch(`${sandbox.url}/external/v1/withdrawal-intents?size=1${filter}`, {
      headers: { authorization: `Bearer ${DEMO_KEYS.acmeReadWrite}` },
    });
    return ((await page.json()) as { data: { id: string }[] }).data[0]?.id;
  };
  const intentRestId =
    (await newestIntent('&statusIn=preparing,reviewing,pending')) ?? (await newestIntent('')) ?? '';
  return {
    url: sandbox.url,
    demoKey: DEMO_KEYS.acmeReadWrite,
    demo: {
      walletId: globalIdOf('Wallet', walletRestId),
      withdrawalIntentId: globalIdOf('WithdrawalIntent', intentRestId),
      // Outside the platform: a withdrawal to it is an ordinary external one.
      externalAddress: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
      idempotencyKey: `graphiql-${randomUUID()}`,
    },
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
