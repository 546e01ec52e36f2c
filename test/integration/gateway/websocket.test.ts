import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type RunningServer } from '../../../src/server.ts';
import { createLogger } from '../../../src/shared/logger.ts';
import { DEFAULTS, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { withdrawalBody } from '../../support/sandbox.ts';
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
  t = await startTestGateway({ live: { pollMs: 20, maxPollMs: 20 } });
  server = await listen(t.gateway, {
    port: 0,
    host: '127.0.0.1',
    logger: createLogger('debug', suiteLogDestination()),
    maxRequestBytes: DEFAULTS.maxRequestBytes,
    edge: DEFAULTS.edge,
    scopeOf: (authorization) => t.client.scopeOf(authorization),
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
    expect((await results.next()).value).toEqual({
      data: { withdrawalIntentUpdated: { restId: id, status: 'PREPARING' } },
    });
    await t.sandbox.world.transitionWithdrawal(id, 'cancelled');
    expect((await results.next()).value).toEqual({
      data: { withdrawalIntentUpdated: { restId: id, status: 'CANCELLED' } },
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

describe('GraphQL over WebSocket with trusted documents enforced', () => {
  it('refuses an ad-hoc document with PERSISTED_DOCUMENT_REQUIRED, as a POST is refused', async () => {
    const enforced = await startTestGateway({
      gateway: { trustedDocuments: { mode: 'enforce', manifest: new Map() } },
    });
    const running = await listen(enforced.gateway, {
      port: 0,
      host: '127.0.0.1',
      logger: createLogger('debug', suiteLogDestination()),
      maxRequestBytes: DEFAULTS.maxRequestBytes,
      edge: DEFAULTS.edge,
      scopeOf: (authorization) => enforced.client.scopeOf(authorization),
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
