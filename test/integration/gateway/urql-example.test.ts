import { randomUUID } from 'node:crypto';
import { print, visit } from 'graphql';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WalletScreenDocument } from '../../../examples/urql/generated/graphql.ts';
import {
  createWalletClient,
  loadActivity,
  loadDashboard,
  loadWalletScreen,
  watchWithdrawal,
  withdraw,
} from '../../../examples/urql/wallet-client.ts';
import { listen, type RunningServer } from '../../../src/server.ts';
import { createLogger } from '../../../src/shared/logger.ts';
import { DEFAULTS, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { EXTERNAL_TRON_ADDRESS } from '../../support/sandbox.ts';
import { recordSuiteKey, suiteLogDestination } from '../../support/suite-logs.ts';

/**
 * The urql example of docs/clients.md (examples/urql/wallet-client.ts: @urql/core, graphcache with the
 * schema and keys, graphql-sse) over real HTTP against a listening gateway at its defaults, with
 * urql's default transport: queries as GET, which pass the CSRF check on their Authorization header.
 */

let t: TestGateway;
let server: RunningServer;
let app: ReturnType<typeof createWalletClient>;
let key: string;
let walletId: string;
const fetchSpy = vi.spyOn(globalThis, 'fetch');

beforeAll(async () => {
  t = await startTestGateway({ config: { subscriptions: { pollMs: 20, maxPollMs: 20 } } });
  server = await listen(t.gateway, {
    port: 0,
    host: '127.0.0.1',
    logger: createLogger('debug', suiteLogDestination()),
    maxRequestBytes: DEFAULTS.maxRequestBytes,
    edge: DEFAULTS.edge,
    scopes: t.runtime.scopes,
  });
  const merchant = await t.sandbox.world.merchant();
  recordSuiteKey(merchant.key);
  key = merchant.key;
  const wallet = await t.sandbox.world.wallet(merchant.id, { USDT: '100', TRX: '10' });
  walletId = wallet.id;
  for (let i = 1; i <= 5; i += 1) await t.sandbox.world.deposit(wallet.id, { amount: `${i}.00` });
  app = createWalletClient(server.url, merchant.key);
});
afterAll(async () => {
  app.close();
  await server.close(1_000);
  await t.close();
  fetchSpy.mockRestore();
});

const input = (amount: string) => ({
  walletId,
  serviceFeeMode: 'EXCLUSIVE' as const,
  currencyCode: 'USDT',
  amount,
  destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS },
});

/** The methods of the requests urql sent to the gateway since `from`. */
const methodsSince = (from: number) =>
  fetchSpy.mock.calls
    .slice(from)
    .filter(([url]) => String(url).startsWith(server.url))
    .map(([, init]) => init?.method ?? 'GET');

describe('the urql example (graphcache, graphql-sse)', () => {
  it('loads the dashboard with a GET query', async () => {
    const from = fetchSpy.mock.calls.length;
    const wallets = await loadDashboard(app.client);
    expect(wallets.totalCount).toBe(1);
    expect(wallets.nodes[0]?.assets.map((asset) => asset.currencyCode).sort()).toEqual(['TRX', 'USDT']);
    expect(methodsSince(from)).toEqual(['GET']);
  });

  it('shows the deferred wallet screen over GET and multipart/mixed as it comes: the balances, then the whole screen, as the undeferred one; on a second visit the cached lists until the last part', async () => {
    // The reference: the same selection without @defer, answered at once.
    const undeferred = print(
      visit(WalletScreenDocument, {
        Directive: (directive) => (directive.name.value === 'defer' ? null : undefined),
      }),
    );
    const reference = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query: undeferred, variables: { id: walletId } }),
    });
    const { wallet } = ((await reference.json()) as { data: { wallet: Record<string, unknown> } }).data;
    expect((wallet.deposits as { nodes: unknown[] }).nodes).toHaveLength(5);
    const { deposits: _deposits, withdrawalIntents: _withdrawalIntents, ...balances } = wallet;

    const from = fetchSpy.mock.calls.length;
    const shown: unknown[] = [];
    const screen = await loadWalletScreen(app.client, walletId, (update) => shown.push(update));
    expect(shown).toEqual([
      { complete: false, wallet: balances },
      { complete: true, wallet },
    ]);
    expect(screen).toEqual(wallet);
    // fetchExchange as it is: one GET, answered in parts (its default `accept` offers multipart/mixed).
    expect(methodsSince(from)).toEqual(['GET']);
    const response = (await fetchSpy.mock.results.at(-1)?.value) as Response;
    expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);

    // A second visit: the first result already has lists, the ones graphcache kept from the first
    // visit; the screen is whole only with the last part.
    const again: unknown[] = [];
    await loadWalletScreen(app.client, walletId, (update) => again.push(update));
    expect(again).toEqual([
      { complete: false, wallet },
      { complete: true, wallet },
    ]);
  });

  it('pages the activity feed 2 by 2 into one cached list of all 5 deposits (relayPagination)', async () => {
    const activity = await loadActivity(app.client, 2, 3);
    expect(activity.pages.map((page) => page.shown)).toEqual([2, 4, 5]);
    expect(new Set(activity.feed.map((deposit) => deposit.amount))).toEqual(
      new Set([
        '1.0000000000000000',
        '2.0000000000000000',
        '3.0000000000000000',
        '4.0000000000000000',
        '5.0000000000000000',
      ]),
    );
  });

  it("gets a business failure as a typed result, with the UserError's code and message kept by the cache", async () => {
    expect(await withdraw(app.client, input('5000.00'))).toEqual({
      failure: { code: 'withdrawal_intent.balance_insufficient', message: expect.any(String) },
    });
    expect(await withdraw(app.client, input('1.005'))).toEqual({
      failure: { code: 'data_invalid', message: expect.any(String), field: ['input', 'amount'] },
    });
  });

  it('creates a withdrawal once per idempotency key and watches it over SSE until its final status', async () => {
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
      const to = next[status];
      if (to) void t.sandbox.world.transitionWithdrawal(created.intent.restId, to);
    });
    await watch.done;
    watch.stop();
    expect(shown).toEqual(['PREPARING', 'REVIEWING', 'PENDING', 'COMPLETED']);
  });
});
