import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Environment } from 'relay-runtime';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { toRelayPayloads } from '../../../examples/relay/network.ts';
import {
  createWalletClient,
  loadActivity,
  loadDashboard,
  loadWalletScreen,
  pageWalletDeposits,
  readWalletScreen,
  refetchWallet,
  type WalletScreen,
  watchWithdrawal,
  withdraw,
} from '../../../examples/relay/wallet-client.ts';
import { loadManifest, type TrustedDocumentsMode } from '../../../src/config/config.ts';
import { listen, type RunningServer } from '../../../src/server.ts';
import { createLogger } from '../../../src/shared/logger.ts';
import { DEFAULTS, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { EXTERNAL_TRON_ADDRESS } from '../../support/sandbox.ts';
import { recordSuiteKey, suiteLogDestination } from '../../support/suite-logs.ts';

/**
 * The Relay example of docs/clients.md (examples/relay: relay-compiler's artifacts on relay-runtime,
 * its network layer and data layer) over real HTTP against a listening gateway, in the two ways an
 * app meets one: without a manifest (the operations' text goes) and with relay-compiler's
 * persisted queries as the gateway's manifest in `enforce` (their ids alone). Each screen is
 * compared with what the sandbox's REST API says.
 */

const ROOT = new URL('../../..', import.meta.url).pathname;
const MANIFEST = join(ROOT, 'examples/relay/generated/persisted-queries.json');
const fetchSpy = vi.spyOn(globalThis, 'fetch');
afterAll(() => fetchSpy.mockRestore());

async function listenOn(t: TestGateway): Promise<RunningServer> {
  return listen(t.gateway, {
    port: 0,
    host: '127.0.0.1',
    logger: createLogger('debug', suiteLogDestination()),
    maxRequestBytes: DEFAULTS.maxRequestBytes,
    edge: DEFAULTS.edge,
    scopes: t.runtime.scopes,
  });
}

interface RestWallet {
  id: string;
  networkEndpoint: { identifier: string };
  assets: { currencyCode: string; balance: { availableAmount: string; lockedAmount: string } }[];
}

/** A decimal as a number, to compare the REST API's amounts with the gateway's. */
const n = (value: string) => Number(value);
const balancesOf = (assets: readonly RestWallet['assets'][number][]) =>
  assets.map(({ currencyCode, balance }) => [
    currencyCode,
    n(balance.availableAmount),
    n(balance.lockedAmount),
  ]);

describe.each([
  { mode: 'off' as TrustedDocumentsMode, documentIds: false },
  { mode: 'enforce' as TrustedDocumentsMode, documentIds: true },
])('the Relay example, trusted documents $mode', ({ mode, documentIds }) => {
  let t: TestGateway;
  let server: RunningServer;
  let environment: Environment;
  let key: string;
  let walletId: string;
  let restWalletId: string;
  // Every body the app sent, test by test.
  const bodies: Record<string, unknown>[] = [];
  let mark = 0;
  beforeEach(() => {
    mark = fetchSpy.mock.calls.length;
  });
  afterEach(() => {
    bodies.push(...sentSince(mark));
  });

  /** The REST API's truth, read with the merchant's key. */
  const rest = async <T>(path: string): Promise<T> =>
    (await t.sandbox.call('GET', `/external/v1/${path}`, { key })).body.data as T;

  /** The bodies of the requests sent to the gateway since `from`. */
  const sentSince = (from: number) =>
    fetchSpy.mock.calls
      .slice(from)
      .filter(([url]) => String(url).startsWith(server.url))
      .map(([, init]) => JSON.parse(String(init?.body)) as Record<string, unknown>);

  beforeAll(async () => {
    t = await startTestGateway({
      config: {
        trustedDocuments: { mode, manifest: mode === 'enforce' ? loadManifest(MANIFEST) : new Map() },
        subscriptions: { pollMs: 20, maxPollMs: 20 },
      },
    });
    server = await listenOn(t);
    const merchant = await t.sandbox.world.merchant();
    recordSuiteKey(merchant.key);
    key = merchant.key;
    const wallet = await t.sandbox.world.wallet(merchant.id, { USDT: '100', TRX: '10' });
    restWalletId = wallet.id;
    for (let i = 1; i <= 5; i += 1) await t.sandbox.world.deposit(wallet.id, { amount: `${i}.00` });
    environment = createWalletClient(server.url, merchant.key, { documentIds }).environment;
    const dashboard = await loadDashboard(environment);
    walletId = dashboard.nodes[0]?.id ?? '';
  });
  afterAll(async () => {
    await server.close(1_000);
    await t.close();
  });

  const input = (amount: string, idempotencyKey?: string) => ({
    walletId,
    serviceFeeMode: 'EXCLUSIVE' as const,
    currencyCode: 'USDT',
    amount,
    destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS },
    ...(idempotencyKey ? { idempotencyKey } : {}),
  });

  it(`sends ${documentIds ? 'only the persisted-query id' : 'the text, no id'}`, async () => {
    const from = fetchSpy.mock.calls.length;
    await loadDashboard(environment);
    const [sent] = sentSince(from);
    if (documentIds) {
      expect(sent).toEqual({ documentId: expect.stringMatching(/^[0-9a-f]{64}$/), variables: {} });
      expect(loadManifest(MANIFEST).has(String(sent?.documentId))).toBe(true);
    } else {
      expect(sent).toMatchObject({ query: expect.stringContaining('query DashboardScreenQuery') });
      expect(sent).not.toHaveProperty('documentId');
    }
  });

  it("loads the dashboard: the merchant's wallets with the REST API's balances", async () => {
    const wallets = await loadDashboard(environment);
    const truth = await rest<RestWallet[]>('wallets?size=20');
    expect(wallets.totalCount).toBe(truth.length);
    expect(
      wallets.nodes.map((wallet) => ({ address: wallet.address, balances: balancesOf(wallet.assets) })),
    ).toEqual(
      truth.map((wallet) => ({
        address: wallet.networkEndpoint.identifier,
        balances: balancesOf(wallet.assets),
      })),
    );
  });

  it('shows the deferred wallet screen: the balances first, then each list as its part comes, as the REST API has them', async () => {
    const from = fetchSpy.mock.calls.length;
    const shown: WalletScreen[] = [];
    const screen = await loadWalletScreen(environment, walletId, (update) => shown.push(update));
    // One request, answered over multipart/mixed.
    expect(sentSince(from)).toHaveLength(1);
    const response = (await fetchSpy.mock.results.at(-1)?.value) as Response;
    expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);

    // The first payload: the balances, no lists; the last: the whole screen.
    expect(shown[0]?.complete).toBe(false);
    expect(shown[0]?.wallet).not.toHaveProperty('deposits');
    expect(shown[0]?.wallet).not.toHaveProperty('withdrawalIntents');
    expect(shown.at(-1)?.complete).toBe(true);
    expect(shown.filter((update) => update.complete)).toHaveLength(1);

    const truth = await rest<RestWallet>(`wallets/${restWalletId}`);
    expect(balancesOf(screen.assets)).toEqual(balancesOf(truth.assets));
    const deposits = await rest<{ id: string }[]>('deposits?size=5');
    expect(screen.deposits?.nodes.map((deposit) => deposit.restId)).toEqual(deposits.map((d) => d.id));
    expect(screen.deposits?.totalCount).toBe(5);
    expect(screen.withdrawalIntents?.nodes).toEqual([]);

    // A second visit: the store still has the first visit's lists, shown with the first payload;
    // only the end of the answer says the screen is current.
    const again: WalletScreen[] = [];
    expect(await loadWalletScreen(environment, walletId, (update) => again.push(update))).toEqual(screen);
    expect(again[0]).toEqual({ complete: false, wallet: screen });
    expect(again.at(-1)).toEqual({ complete: true, wallet: screen });
    expect(again.filter((update) => update.complete)).toHaveLength(1);
  });

  it("pages the wallet's deposits forward and backward through node(id:), each into one connection in the store, without gaps or duplicates", async () => {
    const truth = (await rest<{ id: string }[]>('deposits?size=100')).map((deposit) => deposit.id);
    expect(truth).toHaveLength(5);

    const forward = await pageWalletDeposits(environment, walletId, 2, 'forward');
    expect(forward.pages).toEqual([2, 4, 5]);
    expect(forward.deposits.map((deposit) => deposit.restId)).toEqual(truth);

    const backward = await pageWalletDeposits(environment, walletId, 2, 'backward');
    expect(backward.pages).toEqual([2, 4, 5]);
    expect(backward.deposits.map((deposit) => deposit.restId)).toEqual(truth);
    if (!documentIds) {
      const from = fetchSpy.mock.calls.length;
      await pageWalletDeposits(environment, walletId, 5, 'forward');
      expect(String(sentSince(from)[0]?.query)).toContain('node(id: $id)');
    }
  });

  it('refetches the wallet through node(id:): the store, and so the wallet screen, has the new balance', async () => {
    const before = readWalletScreen(environment, walletId);
    const usdt = (assets: readonly RestWallet['assets'][number][] | undefined) =>
      n(assets?.find((asset) => asset.currencyCode === 'USDT')?.balance.availableAmount ?? 'NaN');
    const was = usdt(before?.wallet.assets);
    await t.sandbox.world.deposit(restWalletId, { amount: '7.00' });
    const truth = await rest<RestWallet>(`wallets/${restWalletId}`);
    expect(usdt(truth.assets)).toBe(was + 7);

    const wallet = await refetchWallet(environment, walletId);
    expect(usdt(wallet.assets)).toBe(was + 7);
    // The same record in the store: the wallet screen, read without a request, shows it too.
    expect(usdt(readWalletScreen(environment, walletId)?.wallet.assets)).toBe(was + 7);
  });

  it("gets a refused withdrawal as its UserError's code and message", async () => {
    expect(await withdraw(environment, input('5000.00'))).toEqual({
      failure: { code: 'withdrawal_intent.balance_insufficient', message: expect.any(String) },
    });
    expect(await withdraw(environment, input('1.005'))).toEqual({
      failure: { code: 'data_invalid', message: expect.any(String), field: ['input', 'amount'] },
    });
  });

  it("creates a withdrawal once per idempotency key, puts it first in the wallet screen's withdrawals in the store (@prependNode), and watches it to its final status", async () => {
    await loadWalletScreen(environment, walletId);
    const idempotencyKey = `test-${randomUUID()}`;
    const created = await withdraw(environment, input('1.00', idempotencyKey));
    if (!('intent' in created)) throw new Error(`withdrawal failed: ${JSON.stringify(created)}`);
    expect(await withdraw(environment, input('1.00', idempotencyKey))).toEqual(created);
    const intents = await rest<{ id: string }[]>('withdrawal-intents?size=10');
    expect(intents.map((intent) => intent.id)).toEqual([created.intent.restId]);

    // No request: the updater put the new intent into the connection the screen reads.
    const from = fetchSpy.mock.calls.length;
    const screen = readWalletScreen(environment, walletId);
    expect(sentSince(from)).toEqual([]);
    expect(screen?.wallet.withdrawalIntents?.nodes[0]).toMatchObject({
      id: created.intent.id,
      restId: created.intent.restId,
      status: 'PREPARING',
    });
    expect(
      screen?.wallet.withdrawalIntents?.nodes.filter((node) => node.id === created.intent.id),
    ).toHaveLength(1);

    const shown: string[] = [];
    const next: Record<string, string> = {
      PREPARING: 'reviewing',
      REVIEWING: 'pending',
      PENDING: 'completed',
    };
    const watch = watchWithdrawal(environment, created.intent.id, ({ status }) => {
      shown.push(status);
      const to = next[status];
      if (to) void t.sandbox.world.transitionWithdrawal(created.intent.restId, to);
    });
    await watch.done;
    watch.stop();
    expect(shown).toEqual(['PREPARING', 'REVIEWING', 'PENDING', 'COMPLETED']);
  });

  it(`sent every operation ${documentIds ? 'by its id alone' : 'as its text'}`, () => {
    const sent = bodies;
    expect(sent.length).toBeGreaterThan(15);
    for (const body of sent) {
      if (documentIds) expect(Object.keys(body).sort()).toEqual(['documentId', 'variables']);
      else expect(body).toMatchObject({ query: expect.any(String), operationName: expect.any(String) });
    }
  });
});

describe('the Relay example, a partial result', () => {
  let t: TestGateway;
  let server: RunningServer;
  let environment: Environment;
  let key: string;
  const rest = async <T>(path: string): Promise<T> =>
    (await t.sandbox.call('GET', `/external/v1/${path}`, { key })).body.data as T;

  beforeAll(async () => {
    // Without wallet indexes, as in partial-results.test.ts: a deposit's wallet is then a REST call.
    t = await startTestGateway({ config: { walletIndex: { maxBytes: 0 } } });
    server = await listenOn(t);
    const merchant = await t.sandbox.world.merchant();
    recordSuiteKey(merchant.key);
    key = merchant.key;
    const wallet = await t.sandbox.world.wallet(merchant.id, { USDT: '100', TRX: '10' });
    for (let i = 1; i <= 3; i += 1) await t.sandbox.world.deposit(wallet.id, { amount: `${i}.00` });
    environment = createWalletClient(server.url, merchant.key).environment;
  });
  afterAll(async () => {
    await server.close(1_000);
    await t.close();
  });

  it("keeps the activity feed when each deposit's wallet fails (@catch): the deposits, their wallets' errors", async () => {
    // Every read of a wallet (one by id, or the merchant's list, which a small merchant's deposits use)
    // answers 503.
    await t.sandbox.admin('POST', '/faults', { method: 'GET', path: '/external/v1/wallets', status: 503 });
    try {
      const activity = await loadActivity(environment, 10, 1);
      expect(activity.totalCount).toBe(3);
      const truth = await rest<{ id: string }[]>('deposits?size=10');
      expect(activity.feed.map((deposit) => deposit.restId)).toEqual(truth.map((deposit) => deposit.id));
      for (const deposit of activity.feed) {
        expect(deposit.wallet).toBeNull();
        expect(deposit.walletError).toEqual([
          expect.objectContaining({ extensions: expect.objectContaining({ code: 'UPSTREAM_UNAVAILABLE' }) }),
        ]);
      }
    } finally {
      await t.sandbox.admin('DELETE', '/faults');
    }
    // Without the fault, the same screen has the wallets.
    const activity = await loadActivity(environment, 10, 1);
    expect(activity.feed.every((deposit) => deposit.wallet !== null && deposit.walletError === null)).toBe(
      true,
    );
  });
});

describe("the Relay example's network layer", () => {
  it('splits an incremental payload into one Relay payload per part, with its path, label and hasNext', () => {
    expect(
      toRelayPayloads(
        {
          incremental: [
            { data: { a: 1 }, path: ['wallet'], label: 'WalletScreenQuery$defer$deposits' },
            { data: { b: 2 }, path: ['wallet'], label: 'WalletScreenQuery$defer$withdrawals' },
          ],
          hasNext: false,
        },
        'WalletScreenQuery',
      ),
    ).toEqual([
      expect.objectContaining({
        data: { a: 1 },
        path: ['wallet'],
        label: 'WalletScreenQuery$defer$deposits',
        hasNext: true,
      }),
      expect.objectContaining({
        data: { b: 2 },
        path: ['wallet'],
        label: 'WalletScreenQuery$defer$withdrawals',
        hasNext: false,
      }),
    ]);
  });
});

describe('relay:check', () => {
  /** `relay-compiler --validate` in a copy of examples/relay (and the schema it reads). */
  function validate(change?: (dir: string) => void): number {
    const copy = mkdtempSync(join(tmpdir(), 'relay-check-'));
    try {
      mkdirSync(join(copy, 'schema'));
      cpSync(join(ROOT, 'schema/schema.graphql'), join(copy, 'schema/schema.graphql'));
      cpSync(join(ROOT, 'examples/relay'), join(copy, 'examples/relay'), { recursive: true });
      change?.(join(copy, 'examples/relay'));
      execFileSync(join(ROOT, 'node_modules/.bin/relay-compiler'), ['--validate'], {
        cwd: join(copy, 'examples/relay'),
        stdio: 'pipe',
      });
      return 0;
    } catch (error) {
      return (error as { status?: number }).status ?? -1;
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }

  it('passes on the checked-in artifacts and fails when an operation changed without them', () => {
    expect(validate()).toBe(0);
    expect(
      validate((dir) => {
        const file = join(dir, 'operations/DashboardScreen.ts');
        writeFileSync(
          file,
          readFileSync(file, 'utf8').replace('        status\n', '        status\n        restId\n'),
        );
      }),
    ).not.toBe(0);
  });
});
