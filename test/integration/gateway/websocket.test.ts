import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../../../src/server.ts';
import { createLogger } from '../../../src/shared/logger.ts';
import { DEFAULTS, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { withdrawalBody } from '../../support/sandbox.ts';
import { nextPoll } from '../../support/subscriptions.ts';
import { recordSuiteKey, suiteLogDestination } from '../../support/suite-logs.ts';

/**
 * GraphQL over WebSocket (graphql-ws) on a listening gateway, with graphql-ws's own client and
 * Node's WebSocket, as an app would connect. Every operation of a socket runs through the HTTP
 * pipeline, so what holds for a POST holds here: the key from connection_init, auth refusals,
 * trusted documents.
 */

let t: TestGateway;
let server: RunningServer;
let merchant: { id: string; key: string };
let walletId: string;
const clients: Client[] = [];

const WATCH = 'subscription Watch($id: ID!) { withdrawalIntentUpdated(id: $id) { restId status } }';

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
  merchant = await t.sandbox.world.merchant();
  recordSuiteKey(merchant.key);
  walletId = (await t.sandbox.world.wallet(merchant.id)).id;
});
afterAll(async () => {
  for (const client of clients) await client.dispose();
  await server.close(1_000);
  await t.close();
});

function connect(key: string | null): Client {
  const client = createClient({
    url: `${server.url.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: key ? { Authorization: `Bearer ${key}` } : {},
    retryAttempts: 0,
    lazy: true,
  });
  clients.push(client);
  return client;
}

async function createIntent(): Promise<string> {
  const created = await t.sandbox.call('POST', '/external/v1/withdrawal-intents', {
    key: merchant.key,
    body: withdrawalBody(walletId, { amount: '1.00' }),
  });
  return created.body.data.id as string;
}

describe('GraphQL over WebSocket', () => {
  it('streams a withdrawal through its transitions with the key sent in connection_init, then completes', async () => {
    const id = await createIntent();
    const results = connect(merchant.key).iterate({ query: WATCH, variables: { id } });
    // Each result carries the id of its event, to resume from (extensions.eventId).
    const eventId = { eventId: expect.stringMatching(/^[\w-]+$/) };
    expect((await results.next()).value).toEqual({
      data: { withdrawalIntentUpdated: { restId: id, status: 'PREPARING' } },
      extensions: eventId,
    });
    await t.sandbox.world.transitionWithdrawal(id, 'cancelled');
    expect((await results.next()).value).toEqual({
      data: { withdrawalIntentUpdated: { restId: id, status: 'CANCELLED' } },
      extensions: eventId,
    });
    expect((await results.next()).done).toBe(true);
    await expect.poll(() => t.live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
  });

  it('runs queries too, through the same pipeline', async () => {
    const results = connect(merchant.key).iterate({ query: '{ wallets(first: 5) { totalCount } }' });
    expect((await results.next()).value).toEqual({ data: { wallets: { totalCount: 1 } } });
    expect((await results.next()).done).toBe(true);
  });

  it('refuses a socket without a key before acknowledging it (4401): the operation never runs', async () => {
    const id = await createIntent();
    t.resetCalls();
    const results = connect(null).iterate({ query: WATCH, variables: { id } });
    await expect(results.next()).rejects.toMatchObject({ code: 4401 });
    expect(t.upstreamCalls()).toEqual([]);
  });

  it('a client that leaves ends its subscription and the poller at the gateway', async () => {
    const id = await createIntent();
    const results = connect(merchant.key).iterate({ query: WATCH, variables: { id } });
    await results.next();
    expect(t.live.activity()).toEqual({ subscriptions: 1, pollers: 1 });
    await results.return?.();
    await expect.poll(() => t.live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
  });
});

describe('live deposits over WebSocket', () => {
  const PAYMENT =
    'subscription Payment($walletId: ID, $status: [DepositStatus!]) { depositsUpdated(walletId: $walletId, status: $status) { restId walletRestId status } }';

  it("a checkout screen watching one wallet gets a payment made meanwhile, then its status change; other wallets' and merchants' payments never", async () => {
    const otherWallet = (await t.sandbox.world.wallet(merchant.id)).id;
    const stranger = await t.sandbox.world.merchant();
    recordSuiteKey(stranger.key);
    const strangerWallet = (await t.sandbox.world.wallet(stranger.id)).id;
    const socket = connect(merchant.key);
    const screen = socket.iterate({ query: PAYMENT, variables: { walletId: walletId } });
    const received = socket.iterate({ query: PAYMENT, variables: { walletId, status: ['COMPLETED'] } });
    // The strangers watch too: their feed runs beside this merchant's.
    const strangers = connect(stranger.key).iterate({ query: PAYMENT, variables: {} });
    await expect.poll(() => t.live.activity()).toEqual({ subscriptions: 3, pollers: 2 });
    await nextPoll(t.metrics, 'deposits');

    await t.sandbox.world.deposit(otherWallet, { amount: '3', status: 'pending' });
    await t.sandbox.world.deposit(strangerWallet, { amount: '4', status: 'completed' });
    const payment = (await t.sandbox.world.deposit(walletId, { amount: '7.25', status: 'pending' })).id;
    expect((await screen.next()).value).toEqual({
      data: { depositsUpdated: { restId: payment, walletRestId: walletId, status: 'PENDING' } },
      extensions: { eventId: expect.any(String) },
    });
    await t.sandbox.world.transitionDeposit(payment, 'completed');
    expect((await screen.next()).value).toEqual({
      data: { depositsUpdated: { restId: payment, walletRestId: walletId, status: 'COMPLETED' } },
      extensions: { eventId: expect.any(String) },
    });
    // "Payment received": the completed deposit is the first and only thing this one was sent.
    expect((await received.next()).value).toEqual({
      data: { depositsUpdated: { restId: payment, walletRestId: walletId, status: 'COMPLETED' } },
      extensions: { eventId: expect.any(String) },
    });
    expect((await strangers.next()).value?.data.depositsUpdated.walletRestId).toBe(strangerWallet);
    await received.return?.();
    await screen.return?.();
    await strangers.return?.();
    await expect.poll(() => t.live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
  });

  it("refuses another merchant's wallet with NOT_FOUND and keeps the socket", async () => {
    const stranger = await t.sandbox.world.merchant();
    recordSuiteKey(stranger.key);
    const socket = connect(stranger.key);
    const refused = socket.iterate({ query: PAYMENT, variables: { walletId } });
    expect((await refused.next()).value).toEqual({
      errors: [
        {
          message: `No wallet ${walletId} exists for this merchant.`,
          locations: [{ line: 1, column: PAYMENT.indexOf('depositsUpdated') + 1 }],
          path: ['depositsUpdated'],
          extensions: { code: 'NOT_FOUND', id: walletId },
        },
      ],
    });
    expect((await refused.next()).done).toBe(true);
    const works = socket.iterate({ query: '{ wallets(first: 5) { totalCount } }' });
    expect((await works.next()).value).toEqual({ data: { wallets: { totalCount: 0 } } });
    expect(t.live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
  });
});

describe('GraphQL over WebSocket with trusted documents enforced', () => {
  it('refuses an ad-hoc document with PERSISTED_DOCUMENT_REQUIRED, as a POST is refused', async () => {
    const enforced = await startTestGateway({
      config: { trustedDocuments: { mode: 'enforce', manifest: new Map() } },
    });
    const running = await listen(enforced.gateway, {
      port: 0,
      host: '127.0.0.1',
      logger: createLogger('debug', suiteLogDestination()),
      maxRequestBytes: DEFAULTS.maxRequestBytes,
      edge: DEFAULTS.edge,
      scopes: enforced.runtime.scopes,
    });
    const client = createClient({
      url: `${running.url.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { Authorization: `Bearer ${merchant.key}` },
      retryAttempts: 0,
    });
    try {
      const results = client.iterate({ query: WATCH, variables: { id: 'x' } });
      const first = (await results.next()).value;
      expect(first?.errors?.map((e: { extensions?: { code?: string } }) => e.extensions?.code)).toEqual([
        'PERSISTED_DOCUMENT_REQUIRED',
      ]);
      expect(enforced.upstreamCalls()).toEqual([]);
    } finally {
      await client.dispose();
      await running.close(1_000);
      await enforced.close();
    }
  });
});
