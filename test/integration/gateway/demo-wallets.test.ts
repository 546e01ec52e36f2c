import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/config.ts';
import { startEmbeddedSandbox } from '../../../src/process/embedded-sandbox.ts';
import { exampleTabs } from '../../../src/process/graphiql-tabs.ts';
import { createGatewayRuntime, type GatewayRuntime } from '../../../src/runtime.ts';
import { DEFAULT_ADMIN_TOKEN } from '../../../src/sandbox/config.ts';
import { DEMO_KEYS } from '../../../src/sandbox/seed.ts';
import { createLogger } from '../../../src/shared/logger.ts';
import type { Gateway } from '../../../src/yoga.ts';
import { testConfig } from '../../support/gateway.ts';
import { suiteLogDestination } from '../../support/suite-logs.ts';

// docs/sandbox.md "Demo wallets" against the world `npm start` seeds: every wallet's balances as
// the Dashboard tab shows them, at start and once the seeded backlog has settled, and each refusal
// the page says how to provoke, run as GraphiQL's CreateWithdrawal tab with the changes it names.
// The doc is the one place these numbers are written; this test keeps it true.

const DOC = readFileSync(new URL('../../../docs/sandbox.md', import.meta.url), 'utf8');
const MERCHANT_KEYS: Record<string, string> = {
  'Acme Coffee': DEMO_KEYS.acmeReadWrite,
  'Globex Travel': DEMO_KEYS.globexReadWrite,
  'Initech Labs': DEMO_KEYS.initechReadWrite,
};

/** The markdown table's body rows under the heading, cells trimmed, backticks kept. */
function tableAfter(heading: string, nth = 0): string[][] {
  const at = DOC.indexOf(`\n${heading}\n`);
  const section = DOC.slice(at + 1);
  if (at === -1) throw new Error(`docs/sandbox.md has no heading ${heading}`);
  const tables =
    section
      .split(/\n(?=#{2,3} )/)[0]
      ?.split(/\n\n+/)
      .filter((block) => block.startsWith('|')) ?? [];
  const table = tables[nth];
  if (!table) throw new Error(`docs/sandbox.md: table ${nth} under ${heading} is missing`);
  return table
    .split('\n')
    .slice(2)
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
}

/** A decimal string as the doc writes it: thousands apart by a space, always two places. */
function asDoc(amount: string | undefined): string {
  const [whole = '0', fraction = ''] = (amount ?? '0').split('.');
  if (fraction.replace(/0+$/, '').length > 2) throw new Error(`${amount} has more than two places`);
  return `${whole.replace(/\B(?=(\d{3})+$)/g, ' ')}.${fraction.padEnd(2, '0').slice(0, 2)}`;
}

let sandbox: Awaited<ReturnType<typeof startEmbeddedSandbox>>;
let runtime: GatewayRuntime;
let gateway: Gateway;
let tabs: ReturnType<typeof exampleTabs>;
const logger = createLogger('debug', suiteLogDestination());

beforeAll(async () => {
  // As `npm start` starts it, with the clocks stopped: the world holds still while it is read.
  sandbox = await startEmbeddedSandbox(
    parseConfig({ SANDBOX_AUTO_ADVANCE_MS: '0', SANDBOX_DEPOSIT_EVERY_MS: '0' }),
    logger,
  );
  tabs = exampleTabs(sandbox.demo, JSON.stringify({ Authorization: `Bearer ${sandbox.demoKey}` }));
  // No micro-cache: the test changes the world between reads.
  runtime = await createGatewayRuntime(testConfig({ upstream: { cacheTtlMs: 0 } }), {
    logger,
    upstreamURL: sandbox.url,
    processMetrics: false,
  });
  ({ gateway } = runtime);
});
afterAll(async () => {
  await runtime[Symbol.asyncDispose]();
  await sandbox.stop();
});

async function graphql(key: string, query: string, variables: Record<string, unknown> = {}) {
  const response = await gateway.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
  expect(body.errors).toBeUndefined();
  return body.data as Record<string, unknown>;
}

interface WalletView {
  id: string;
  assets: { currencyCode: string; balance: { availableAmount: string; lockedAmount: string } }[];
}

/** Every demo wallet as the Dashboard tab shows it, merchant by merchant, in the Dashboard's order. */
async function dashboards(): Promise<{ merchant: string; wallet: WalletView }[]> {
  const dashboard = tabs.find((tab) => tab.query.includes('query Dashboard'))?.query ?? '';
  const rows: { merchant: string; wallet: WalletView }[] = [];
  for (const [merchant, key] of Object.entries(MERCHANT_KEYS)) {
    const data = (await graphql(key, dashboard)) as { wallets: { totalCount: number; nodes: WalletView[] } };
    expect(data.wallets.nodes.length).toBe(data.wallets.totalCount);
    for (const wallet of data.wallets.nodes) rows.push({ merchant, wallet });
  }
  return rows;
}

const balance = (wallet: WalletView, currency: string) =>
  wallet.assets.find((asset) => asset.currencyCode === currency)?.balance;

/** The demo wallets table's columns, by header. */
const WALLET_COLUMNS = [
  'Merchant',
  'Wallet `id`',
  'USDT available',
  'USDT locked',
  'TRX available',
  'USDT available, settled',
  'TRX available, settled',
] as const;

describe('docs/sandbox.md, Demo wallets', () => {
  const heading = '### Demo wallets';
  let atStart: { merchant: string; wallet: WalletView }[];

  it('lists every demo wallet with its balances at start, as the Dashboard tab shows them', async () => {
    const header = DOC.slice(DOC.indexOf(`\n${heading}\n`)).match(/\n\| Merchant .*\|\n/)?.[0] ?? '';
    expect(
      header
        .split('|')
        .map((cell) => cell.trim())
        .filter(Boolean),
    ).toEqual([...WALLET_COLUMNS]);
    atStart = await dashboards();
    const documented = tableAfter(heading).map((row) => row.slice(0, 5));
    expect(documented).toEqual(
      atStart.map(({ merchant, wallet }) => [
        merchant,
        `\`${wallet.id}\``,
        asDoc(balance(wallet, 'USDT')?.availableAmount),
        asDoc(balance(wallet, 'USDT')?.lockedAmount),
        asDoc(balance(wallet, 'TRX')?.availableAmount),
      ]),
    );
    // GraphiQL's tabs use the first: it holds the demo withdrawal's lock.
    expect(atStart[0]?.wallet.id).toBe(sandbox.demo.walletId);
  });

  it('says how to provoke each refusal, and none of them withdraws', async () => {
    const form = tabs.find((tab) => tab.query.includes('mutation CreateWithdrawal'));
    const input = JSON.parse(form?.variables ?? '{}').input as Record<string, unknown>;
    const refusals = tableAfter(heading, 1);
    expect(refusals.map((row) => row[0])).toEqual([
      '`BalanceInsufficientError`',
      '`DailyLimitExceededError`',
      '`ServiceFeeNotCoveredError`',
      '`DestinationInvalidError`',
      '`DestinationInternalError`',
      '`WithdrawalConfigIncompleteError`',
    ]);
    for (const [typename = '', changes = ''] of refusals) {
      // Each change is `"field": value` (destination's `identifier` included) or an Authorization.
      const fields = [...changes.matchAll(/`("\w+": [^`]+)`/g)].map((m) => JSON.parse(`{${m[1]}}`));
      // The page says to drop the tab's idempotency key: reused with another input it is refused.
      const { idempotencyKey: _, ...changed }: Record<string, unknown> = { ...input };
      for (const field of fields) {
        if ('identifier' in field) changed.destination = { ...(changed.destination as object), ...field };
        else Object.assign(changed, field);
      }
      const key = /`Authorization: Bearer (\w+)`/.exec(changes)?.[1] ?? sandbox.demoKey;
      const data = (await graphql(key, form?.query ?? '', { input: changed })) as {
        createWithdrawalIntent: { __typename: string; code: string };
      };
      expect(data.createWithdrawalIntent.__typename, changes).toBe(typename.replaceAll('`', ''));
    }
    // Why the page says to drop the key: once the tab's key has answered, another input with it
    // is refused, whatever the input.
    const withTabKey = async (amount: string) =>
      (
        (await graphql(sandbox.demoKey, form?.query ?? '', { input: { ...input, amount } })) as {
          createWithdrawalIntent: { __typename: string };
        }
      ).createWithdrawalIntent.__typename;
    expect(await withTabKey('1000000')).toBe('BalanceInsufficientError');
    expect(await withTabKey('60000')).toBe('IdempotencyKeyReusedError');
    // Nothing was created or locked: every balance is as it was.
    expect(await dashboards()).toEqual(atStart);
  });

  it('gives the balances once the seeded backlog has settled, the demo withdrawal still locked', async () => {
    // What the live demo's clock does in the first half-minute, done at once through the admin
    // API: every open deposit completes, every open intent completes, but the demo withdrawal,
    // held until its first read by id.
    const demoIntent = Buffer.from(sandbox.demo.withdrawalIntentId, 'base64').toString().split(':')[1];
    const admin = (path: string, body: unknown) =>
      fetch(`${sandbox.url}/sandbox/v1${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${DEFAULT_ADMIN_TOKEN}` },
        body: JSON.stringify(body),
      });
    for (const key of Object.values(MERCHANT_KEYS)) {
      const read = async (path: string) =>
        (
          (await (
            await fetch(`${sandbox.url}/external/v1/${path}`, { headers: { authorization: `Bearer ${key}` } })
          ).json()) as { data: { id: string; status: string }[] }
        ).data;
      for (const deposit of await read('deposits?size=1000&statusIn=pending,processing')) {
        expect((await admin(`/deposits/${deposit.id}/transition`, { status: 'completed' })).status).toBe(200);
      }
      const next: Record<string, string[]> = {
        preparing: ['reviewing', 'pending', 'completed'],
        reviewing: ['pending', 'completed'],
        pending: ['completed'],
      };
      for (const intent of await read('withdrawal-intents?size=1000&statusIn=preparing,reviewing,pending')) {
        if (intent.id === demoIntent) continue;
        for (const status of next[intent.status] ?? []) {
          expect((await admin(`/withdrawal-intents/${intent.id}/transition`, { status })).status).toBe(200);
        }
      }
    }
    const settled = await dashboards();
    const documented = tableAfter(heading).map((row) => [row[0], row[1], row[5], row[6]]);
    expect(documented).toEqual(
      settled.map(({ merchant, wallet }) => [
        merchant,
        `\`${wallet.id}\``,
        asDoc(balance(wallet, 'USDT')?.availableAmount),
        asDoc(balance(wallet, 'TRX')?.availableAmount),
      ]),
    );
    // Locked: the demo withdrawal's 26.5 USDT gross on GraphiQL's wallet, nothing elsewhere.
    expect(settled.map(({ wallet }) => asDoc(balance(wallet, 'USDT')?.lockedAmount))).toEqual(
      settled.map(({ wallet }) => (wallet.id === sandbox.demo.walletId ? '26.50' : '0.00')),
    );
  });
});
