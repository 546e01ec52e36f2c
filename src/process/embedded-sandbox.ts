import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { type Config, ConfigError } from '../config/config.ts';
import { globalIdOf } from '../schema/global-ids.ts';
import type { DemoVariables } from './graphiql-tabs.ts';

/**
 * The embedded sandbox of `npm start` without UPSTREAM_URL, on a free port: the seeded demo world,
 * each deposit and intent advancing on its own clock, a new deposit for the demo merchant every so
 * often, and a demo withdrawal held for GraphiQL's WatchWithdrawal tab. Start-up wiring, like
 * main.ts: with cluster.ts, the only gateway files that know the sandbox exists. Loaded only in
 * sandbox mode: a gateway fronting the real API never loads the sandbox's code, and the
 * production image does not have it.
 */
export async function startEmbeddedSandbox(
  config: Config,
  logger: Logger,
): Promise<{ url: string; demoKey: string; demo: DemoVariables; stop(): Promise<void> }> {
  const [
    { startAutoAdvance },
    { DEMO_KEYS, seedWorld },
    { startSandbox },
    { DEFAULT_ADMIN_TOKEN },
    { createDemoWithdrawal, startDemoActivity },
  ] = await Promise.all([
    import('../sandbox/auto-advance.ts'),
    import('../sandbox/seed.ts'),
    import('../sandbox/http/server.ts'),
    import('../sandbox/config.ts'),
    import('../sandbox/demo.ts'),
  ]).catch((error: unknown) => {
    // The production image leaves src/sandbox out.
    if ((error as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new ConfigError([
      'UPSTREAM_URL: required here: this installation has no embedded sandbox (the production image leaves it out)',
    ]);
  });
  const { store, merchants } = seedWorld();
  const sandboxLogger = logger.child({ component: 'sandbox' });
  const sandbox = await startSandbox({
    store,
    port: config.sandbox.port,
    adminToken: config.sandbox.adminToken ?? DEFAULT_ADMIN_TOKEN,
    logger: sandboxLogger,
  });
  const stopAdvance =
    config.sandbox.autoAdvanceMs > 0
      ? startAutoAdvance(store, { stepMs: config.sandbox.autoAdvanceMs, logger: sandboxLogger })
      : () => {};
  // Outside the platform: a withdrawal to it is an ordinary external one.
  const externalAddress = 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7';
  const stopDeposits =
    config.sandbox.depositEveryMs > 0
      ? startDemoActivity(store, {
          merchantId: merchants.acme.id,
          everyMs: config.sandbox.depositEveryMs,
          withdrawTo: externalAddress,
          logger: sandboxLogger,
        })
      : () => {};
  logger.info({ url: sandbox.url }, 'embedded sandbox started');
  // GraphiQL's examples run at once: a real wallet of the demo merchant, read as a client would.
  const wallets = await fetch(`${sandbox.url}/external/v1/wallets?size=1`, {
    headers: { authorization: `Bearer ${DEMO_KEYS.acmeReadWrite}` },
  });
  const walletRestId = ((await wallets.json()) as { data: { id: string }[] }).data[0]?.id ?? '';
  // ...and a withdrawal to watch live. The tabs are fixed for the process, so it is a new one held
  // in preparing until its first read by id: whoever first runs WatchWithdrawal, however long after
  // start, sees it walk to completed (3 steps of SANDBOX_AUTO_ADVANCE_MS).
  const intent = createDemoWithdrawal(store, merchants.acme.id, walletRestId, externalAddress);
  return {
    url: sandbox.url,
    demoKey: DEMO_KEYS.acmeReadWrite,
    demo: {
      walletId: globalIdOf('Wallet', walletRestId),
      withdrawalIntentId: globalIdOf('WithdrawalIntent', intent.id),
      externalAddress,
      idempotencyKey: `graphiql-${randomUUID()}`,
    },
    async stop() {
      stopAdvance();
      stopDeposits();
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
