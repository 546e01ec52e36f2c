import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, loadActivity, watchWithdrawal, withdraw } from '../../../examples/wallet-app.ts';
import { loadManifest } from '../../../src/plugins/trusted-documents.ts';
import { listen, type RunningServer } from '../../../src/server.ts';
import { createLogger } from '../../../src/shared/logger.ts';
import { DEFAULTS, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { EXTERNAL_TRON_ADDRESS } from '../../support/sandbox.ts';
import { recordSuiteKey, suiteLogDestination } from '../../support/suite-logs.ts';

/**
 * The README's client example (examples/wallet-app.ts), with Apollo Client over real HTTP and
 * WebSocket, against a gateway that runs only the documents of the generated manifest
 * (PERSISTED_DOCUMENTS_MODE=enforce): it pages a connection, handles the mutation's typed errors
 * and watches a withdrawal to its final status.
 */

let t: TestGateway;
let server: RunningServer;
let app: ReturnType<typeof createWalletClient>;
let walletId: string;

beforeAll(async () => {
  const manifest = loadManifest(
    new URL('../../generated/persisted-documents.json', import.meta.url).pathname,
  );
  t = await startTestGateway({
    gateway: { trustedDocuments: { mode: 'enforce', manifest } },
    live: { pollMs: 20, maxPollMs: 20 },
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

describe('the README client example (Apollo Client)', () => {
  it('pages the activity feed 2 by 2 into one cached list of all 5 deposits', async () => {
    const ids = await loadActivity(app.client, 2, 3);
    expect(ids).toHaveLength(5);
    expect(new Set(ids).size).toBe(5);
  });

  it("gets a business failure as a typed result, with the UserError's code and message kept by the cache", async () => {
    expect(await withdraw(app.client, input('5000.00'))).toEqual({
      failure: { code: 'withdrawal_intent.balance_insufficient', message: expect.any(String) },
    });
  });

  it('creates a withdrawal and watches it over the WebSocket until its final status', async () => {
    const created = await withdraw(app.client, input('1.00'));
    if (!('intentId' in created)) throw new Error(`withdrawal failed: ${JSON.stringify(created)}`);
    const restId = created.intentId;
    const shown: string[] = [];
    const next: Record<string, string> = {
      PREPARING: 'reviewing',
      REVIEWING: 'pending',
      PENDING: 'completed',
    };
    await watchWithdrawal(app.client, restId, (status) => {
      shown.push(status);
      // The sandbox moves the intent on once the screen showed its status.
      const to = next[status];
      if (to) void t.sandbox.world.transitionWithdrawal(restIdOf(restId), to);
    });
    expect(shown).toEqual(['PREPARING', 'REVIEWING', 'PENDING', 'COMPLETED']);
  });
});

function restIdOf(globalId: string): string {
  return Buffer.from(globalId, 'base64').toString('utf8').split(':')[1] ?? '';
}
