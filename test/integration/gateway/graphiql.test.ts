import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { createYoga, type GraphiQLOptions } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/config.ts';
import { GatewayMetrics } from '../../../src/observability/metrics.ts';
import { TAB_BAR_STYLE, useGraphiQLDelivery } from '../../../src/plugins/graphiql-delivery.ts';
import { startEmbeddedSandbox } from '../../../src/process/embedded-sandbox.ts';
import {
  DEMO_WALLETS_NOTE,
  EXAMPLE_ORDER,
  exampleOperations,
  exampleTabs,
} from '../../../src/process/graphiql-tabs.ts';
import { createGatewayRuntime, type GatewayRuntime } from '../../../src/runtime.ts';
import { DEFAULT_ADMIN_TOKEN } from '../../../src/sandbox/config.ts';
import { globalIdOf, restIdOf } from '../../../src/schema/global-ids.ts';
import { schema } from '../../../src/schema/index.ts';
import { createLogger } from '../../../src/shared/logger.ts';
import type { LivePolling } from '../../../src/subscriptions/live.ts';
import type { Gateway } from '../../../src/yoga.ts';
import { testConfig } from '../../support/gateway.ts';
import { nextPoll, subscribeSSE } from '../../support/subscriptions.ts';
import { suiteLogDestination } from '../../support/suite-logs.ts';

// GraphiQL as `npm start` serves it: one tab per example operation, each runnable at once against
// the embedded sandbox's demo world, and a 9 MB page sent compressed and revalidated with an ETag.

let sandbox: Awaited<ReturnType<typeof startEmbeddedSandbox>>;
let runtime: GatewayRuntime;
let gateway: Gateway;
let tabs: ReturnType<typeof exampleTabs>;
let live: LivePolling;
const metrics = new GatewayMetrics({ maxOperationNames: 10, processMetrics: false });
const logger = createLogger('debug', suiteLogDestination());

beforeAll(async () => {
  sandbox = await startEmbeddedSandbox(
    parseConfig({ SANDBOX_AUTO_ADVANCE_MS: '0', SANDBOX_DEPOSIT_EVERY_MS: '0' }),
    logger,
  );
  const headers = JSON.stringify({ Authorization: `Bearer ${sandbox.demoKey}` });
  tabs = exampleTabs(sandbox.demo, headers);
  // Polls every 20 ms rather than every second, so that the subscription tabs' news comes at once.
  runtime = await createGatewayRuntime(testConfig({ subscriptions: { pollMs: 20, maxPollMs: 20 } }), {
    logger,
    upstreamURL: sandbox.url,
    processMetrics: false,
    metrics,
    graphiql: { defaultAuthorization: `Bearer ${sandbox.demoKey}`, tabs },
  });
  ({ gateway, live } = runtime);
});
afterAll(async () => {
  await runtime[Symbol.asyncDispose]();
  await sandbox.stop();
});

const page = (headers: Record<string, string> = {}) =>
  gateway.fetch('http://gateway.test/graphql', { headers: { accept: 'text/html', ...headers } });

describe('GraphiQL', () => {
  it('names every example file once in EXAMPLE_ORDER, so a new one cannot go last unseen', () => {
    const names = exampleOperations().map((example) => example.name);
    expect([...names].sort()).toEqual([...EXAMPLE_ORDER].sort());
    expect(new Set(EXAMPLE_ORDER).size).toBe(EXAMPLE_ORDER.length);
  });

  it('opens one tab per example in reading order, the Dashboard first, pointing to the demo wallets', () => {
    expect(tabs.map((t) => /^(query|mutation|subscription) (\w+)/m.exec(t.query)?.[2])).toEqual([
      'Dashboard',
      'WalletScreen',
      'WalletScreenDeferred',
      'ActivityFeed',
      'NodeById',
      'CreateWithdrawal',
      'WatchWithdrawal',
      'LiveDeposits',
      'LiveWithdrawals',
    ]);
    expect(tabs[0]?.query.startsWith(`${DEMO_WALLETS_NOTE}\n# A dashboard screen`)).toBe(true);
    expect(DEMO_WALLETS_NOTE).toContain('docs/sandbox.md, "Demo wallets"');
    // The query editor shows about 57 characters of a line at 1280 and 1024 px: no part of the
    // note may need a sideways scroll.
    for (const line of DEMO_WALLETS_NOTE.split('\n')) expect(line.length).toBeLessThanOrEqual(50);
    expect(tabs.slice(1).some((t) => t.query.includes(DEMO_WALLETS_NOTE))).toBe(false);
  });

  it('runs each tab at once with its prefilled variables', async () => {
    for (const tab of tabs) {
      if (tab.query.includes('subscription ')) {
        const stream = await subscribeSSE(
          gateway,
          tab.query,
          tab.variables ? JSON.parse(tab.variables) : {},
          sandbox.demoKey,
        );
        expect(stream.status).toBe(200);
        if (tab.query.includes('withdrawalIntentUpdated')) {
          // The demo intent as it is now: the first event comes at once.
          const first = await stream.next();
          expect(first?.errors).toBeUndefined();
          expect(first?.data.withdrawalIntentUpdated.id).toBe(sandbox.demo.withdrawalIntentId);
        } else if (tab.query.includes('depositsUpdated')) {
          // News only, as the withdrawals list: once it has its first state, a payment is news.
          await expect.poll(() => live.activity()).toEqual({ subscriptions: 1, pollers: 1 });
          await nextPoll(metrics, 'deposits');
          const paid = await receiveDeposit();
          expect(await stream.next()).toEqual({
            data: {
              depositsUpdated: {
                id: globalIdOf('Deposit', paid.id),
                status: 'PENDING',
                amount: '12.5000000000000000',
                amountNet: '12.5000000000000000',
                currencyCode: 'USDT',
                walletRestId: paid.wallet.id,
                transaction: { hash: expect.any(String) },
                updatedAt: expect.any(String),
              },
            },
          });
        } else {
          // The list feed sends news only: once it has its first state, a new withdrawal is news.
          // A poller may not have its first state yet; once it polls, it has.
          await expect.poll(() => live.activity()).toEqual({ subscriptions: 1, pollers: 1 });
          await nextPoll(metrics, 'withdrawal_intents');
          const created = await createWithdrawal('graphiql-live-withdrawals');
          expect(await stream.next()).toEqual({
            data: {
              withdrawalIntentsUpdated: {
                id: created.id,
                status: 'PREPARING',
                amount: expect.any(String),
                updatedAt: expect.any(String),
              },
            },
          });
        }
        stream.close();
        continue;
      }
      const deferred = tab.query.includes('@defer');
      const response = await gateway.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(deferred && { accept: 'multipart/mixed' }),
          ...JSON.parse(tab.headers ?? '{}'),
        },
        body: JSON.stringify({ query: tab.query, variables: tab.variables ? JSON.parse(tab.variables) : {} }),
      });
      if (deferred) {
        const text = await response.text();
        expect(text).toContain('"wallet":{');
        expect(text).toContain('"deposits":{');
        expect(text).not.toContain('"errors"');
        continue;
      }
      const body = (await response.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
      expect(body.errors, tab.query.split('\n')[1]).toBeUndefined();
      expect(Object.values(body.data ?? {}).every((value) => value !== null)).toBe(true);
    }
  });

  /** A pending deposit into the demo wallet, made through the embedded sandbox's admin API. */
  async function receiveDeposit(): Promise<{ id: string; wallet: { id: string } }> {
    const walletId = restIdOf(sandbox.demo.walletId, 'Wallet');
    const response = await fetch(`${sandbox.url}/sandbox/v1/wallets/${walletId}/deposits`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${DEFAULT_ADMIN_TOKEN}` },
      body: JSON.stringify({ amount: '12.5', status: 'pending' }),
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as { data: { id: string; wallet: { id: string } } }).data;
  }

  /** Runs the CreateWithdrawal tab with another idempotency key: a new intent of the demo merchant. */
  async function createWithdrawal(idempotencyKey: string): Promise<{ id: string }> {
    const tab = tabs.find((t) => t.query.includes('mutation CreateWithdrawal'));
    const variables = JSON.parse(tab?.variables ?? '{}');
    const response = await gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${sandbox.demoKey}` },
      body: JSON.stringify({
        query: tab?.query,
        variables: { input: { ...variables.input, idempotencyKey } },
      }),
    });
    const body = (await response.json()) as {
      data: { createWithdrawalIntent: { __typename: string; withdrawalIntent: { id: string } } };
    };
    expect(body.data.createWithdrawalIntent.__typename).toBe('CreateWithdrawalIntentSuccess');
    return body.data.createWithdrawalIntent.withdrawalIntent;
  }

  it('withdraws to an external address, and a second run replays the same intent', async () => {
    const withdrawal = tabs.find((t) => t.query.includes('mutation CreateWithdrawal'));
    const run = async () =>
      (await (
        await gateway.fetch('http://gateway.test/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${sandbox.demoKey}` },
          body: JSON.stringify({
            query: withdrawal?.query,
            variables: JSON.parse(withdrawal?.variables ?? '{}'),
          }),
        })
      ).json()) as {
        data: { createWithdrawalIntent: { __typename: string; withdrawalIntent?: { id: string } } };
      };
    const first = await run();
    expect(first.data.createWithdrawalIntent.__typename).toBe('CreateWithdrawalIntentSuccess');
    expect((await run()).data.createWithdrawalIntent).toEqual(first.data.createWithdrawalIntent);
  });

  it('sends the page compressed, with an ETag that turns a reload into a 304', async () => {
    const plain = await page();
    const text = await plain.text();
    expect(text).toContain('"defaultTabs"');
    // The tab bar wraps rather than hiding tabs past its width (the browser test measures it).
    expect(text).toContain(`${TAB_BAR_STYLE}</head>`);
    expect(text).toContain(sandbox.demo.walletId);
    const etag = plain.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]{32}"$/);
    expect(plain.headers.get('cache-control')).toBe('private, max-age=300');

    const brotli = await page({ 'accept-encoding': 'gzip, deflate, br' });
    expect(brotli.headers.get('content-encoding')).toBe('br');
    const compressed = new Uint8Array(await brotli.arrayBuffer());
    // The whole page, in a quarter of the bytes or less (9 MB → about 1.9 MB).
    expect(compressed.length).toBeLessThan(text.length / 4);
    const { brotliDecompressSync } = await import('node:zlib');
    expect(brotliDecompressSync(compressed).toString('utf8')).toBe(text);

    const gzip = await page({ 'accept-encoding': 'gzip' });
    expect(gzip.headers.get('content-encoding')).toBe('gzip');

    const again = await page({ 'if-none-match': etag ?? '' });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });

  it('sends GET / to /graphql', async () => {
    const response = await gateway.fetch('http://gateway.test/', { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/graphql');
  });
});

describe('the page under load', () => {
  it('is built once per process, however it is asked for', async () => {
    let renders = 0;
    const render = (options: GraphiQLOptions) => {
      renders++;
      return renderGraphiQL(options);
    };
    const yoga = createYoga({
      schema,
      graphiql: false,
      plugins: [useGraphiQLDelivery({ endpoint: '/graphql', graphiql: { title: 'Once' }, render })],
    });
    const bodies = new Set<string>();
    for (const encoding of ['', '', 'gzip', 'br', 'gzip, br', '']) {
      const response = await yoga.fetch('http://gateway.test/graphql', {
        headers: { accept: 'text/html', 'accept-encoding': encoding },
      });
      expect(response.status).toBe(200);
      const bytes = Buffer.from(await response.arrayBuffer());
      if (encoding === '') bodies.add(bytes.toString('utf8'));
    }
    expect(renders).toBe(1);
    expect(bodies.size).toBe(1);
    expect([...bodies][0]).toContain('<title>Once</title>');
  });
});
