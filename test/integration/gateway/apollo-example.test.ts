import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createWalletClient,
  loadActivity,
  loadDashboard,
  watchWithdrawal,
  withdraw,
} from '../../../examples/apollo/wallet-client.ts';
import { loadManifest, type TrustedDocumentsMode } from '../../../src/config.ts';
import { listen, type RunningServer } from '../../../src/server.ts';
import { createLogger } from '../../../src/shared/logger.ts';
import { DEFAULTS, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { EXTERNAL_TRON_ADDRESS } from '../../support/sandbox.ts';
import { recordSuiteKey, suiteLogDestination } from '../../support/suite-logs.ts';

/**
 * The Apollo Client example of docs/clients.md (examples/apollo/wallet-client.ts) over real HTTP and
 * WebSocket, against a listening gateway in the two ways an app meets one: without a manifest (as
 * `npm start` runs: APQ asks for each text once, sent with codegen's hash) and with the app's own
 * manifest in `enforce` mode (production: the hashes alone).
 */

const MANIFEST = new URL('../../../examples/apollo/generated/persisted-documents.json', import.meta.url)
  .pathname;

describe.each([
  { mode: 'off' as TrustedDocumentsMode, manifest: new Map<string, string>() },
  { mode: 'enforce' as TrustedDocumentsMode, manifest: loadManifest(MANIFEST) },
])('the Apollo Client example, trusted documents $mode', ({ mode, manifest }) => {
  let t: TestGateway;
  let server: RunningServer;
  let app: ReturnType<typeof createWalletClient>;
  let walletId: string;

  beforeAll(async () => {
    t = await startTestGateway({
      config: { trustedDocuments: { mode, manifest }, subscriptions: { pollMs: 20, maxPollMs: 20 } },
    });
    server = await listen(t.gateway, {
      port: 0,
      host: '127.0.0.1',
      logger: createLogger('debug', suiteLogDestination()),
      maxRequestBytes: DEFAULTS.maxRequestBytes,
      edge: DEFAULTS.edge,
      scopeOf: (authorization) => t.client.scopeOf(authorization),
    });
    const merchant = await t.sandbox.world.merchant();
    recordSuiteKey(merchant.key);
    const wallet = await t.sandbox.world.wallet(merchant.id, { USDT: '100', TRX: '10' });
    walletId = wallet.id;
    for (let i = 1; i <= 5; i += 1) await t.sandbox.world.deposit(wallet.id, { amount: `${i}.00` });
    app = createWalletClient(server.url, merchant.key);
  });
  afterAll(async () => {
    await app.close();
    await server.close(1_000);
    await t.close();
  });

  const input = (amount: string) => ({
    walletId,
    serviceFeeMode: 'EXCLUSIVE' as const,
    currencyCode: 'USDT',
    amount,
    destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS },
  });

  it('loads the dashboard', async () => {
    const wallets = await loadDashboard(app.client);
    expect(wallets.totalCount).toBe(1);
    expect(wallets.nodes[0]?.assets.map((asset) => asset.currencyCode).sort()).toEqual(['TRX', 'USDT']);
  });

  it('pages the activity feed 2 by 2 into one cached list of all 5 deposits', async () => {
    const activity = await loadActivity(app.client, 2, 3);
    expect(activity.pages.map((page) => page.shown)).toEqual([2, 4, 5]);
    expect(new Set(activity.feed.map((deposit) => deposit.id)).size).toBe(5);
  });

  it("gets a business failure as a typed result, with the UserError's code and message kept by the cache", async () => {
    expect(await withdraw(app.client, input('5000.00'))).toEqual({
      failure: { code: 'withdrawal_intent.balance_insufficient', message: expect.any(String) },
    });
    expect(await withdraw(app.client, input('1.005'))).toEqual({
      failure: { code: 'data_invalid', message: expect.any(String), field: ['input', 'amount'] },
    });
  });

  it('creates a withdrawal once per idempotency key and watches it over the WebSocket until its final status', async () => {
    const idempotencyKey = `test-${randomUUID()}`;
    const created = await withdraw(app.client, { ...input('1.00'), idempotencyKey });
    if (!('intent' in created)) throw new Error(`withdrawal failed: ${JSON.stringify(created)}`);
    expect(await withdraw(app.client, { ...input('1.00'), idempotencyKey })).toEqual(created);
    const shown: string[] = [];
    const next: Record<string, string> = {
      PREPARING: 'reviewing',
      REVIEWING: 'pending',
      PENDING: 'completed',
    };
    const watch = watchWithdrawal(app.client, created.intent.id, ({ status }) => {
      shown.push(status);
      // The sandbox moves the intent on once the screen showed its status.
      const to = next[status];
      if (to) void t.sandbox.world.transitionWithdrawal(created.intent.restId, to);
    });
    await watch.done;
    expect(shown).toEqual(['PREPARING', 'REVIEWING', 'PENDING', 'COMPLETED']);
  });
});
