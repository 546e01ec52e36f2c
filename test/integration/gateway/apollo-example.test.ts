import { execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import { GraphQL17Alpha9Handler } from '@apollo/client/incremental';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { print, visit } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardScreenDocument, WalletScreenDocument } from '../../../examples/apollo/generated/graphql.ts';
import {
  createWalletClient,
  loadActivity,
  loadDashboard,
  loadWalletScreen,
  watchWithdrawal,
  withdraw,
} from '../../../examples/apollo/wallet-client.ts';
import { loadManifest, type TrustedDocumentsMode } from '../../../src/config/config.ts';
import { sha256 } from '../../../src/execution/document-hashes.ts';
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

// The app's wallet screen without its @defer: the test's reference for what the screen shows once
// complete. In `enforce` the test's gateway has it in its manifest besides the app's documents.
const UNDEFERRED = print(
  visit(WalletScreenDocument, {
    Directive: (directive) => (directive.name.value === 'defer' ? null : undefined),
  }),
);

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

/** A POST of `query` to the listening gateway with the given `accept`. */
function post(server: RunningServer, key: string, accept: string, query: string, variables: object) {
  return fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${key}` },
    body: JSON.stringify({ query, variables }),
  });
}

describe.each([
  { mode: 'off' as TrustedDocumentsMode, manifest: new Map<string, string>() },
  {
    mode: 'enforce' as TrustedDocumentsMode,
    manifest: new Map([...loadManifest(MANIFEST), [sha256(UNDEFERRED), UNDEFERRED]]),
  },
])('the Apollo Client example, trusted documents $mode', ({ mode, manifest }) => {
  let t: TestGateway;
  let server: RunningServer;
  let app: ReturnType<typeof createWalletClient>;
  let key: string;
  let walletId: string;

  beforeAll(async () => {
    t = await startTestGateway({
      config: { trustedDocuments: { mode, manifest }, subscriptions: { pollMs: 20, maxPollMs: 20 } },
    });
    server = await listenOn(t);
    const merchant = await t.sandbox.world.merchant();
    recordSuiteKey(merchant.key);
    key = merchant.key;
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

  it('shows the deferred wallet screen: the balances first, without the lists, then the whole screen, as the undeferred one; on a second visit the cached lists until the last part', async () => {
    const reference = await post(server, key, 'application/json', UNDEFERRED, { id: walletId });
    const { wallet } = ((await reference.json()) as { data: { wallet: Record<string, unknown> } }).data;
    expect(wallet.deposits).toMatchObject({ nodes: expect.any(Array) });
    expect((wallet.deposits as { nodes: unknown[] }).nodes).toHaveLength(5);
    const { deposits: _deposits, withdrawalIntents: _withdrawalIntents, ...balances } = wallet;
    expect(balances).toMatchObject({
      assets: [expect.objectContaining({ currencyCode: expect.any(String) }), expect.anything()],
    });

    const shown: unknown[] = [];
    const screen = await loadWalletScreen(app.client, walletId, (update) => shown.push(update));
    // Apollo's 'streaming' result (the first payload), then its 'complete' one.
    expect(shown).toEqual([
      { complete: false, wallet: balances },
      { complete: true, wallet },
    ]);
    expect(screen).toEqual(wallet);

    // A second visit: the first result already has lists, the ones cached by the first visit
    // (Apollo calls it 'complete' while `loading`); the screen is whole only with the last part.
    const again: unknown[] = [];
    await loadWalletScreen(app.client, walletId, (update) => again.push(update));
    expect(again).toEqual([
      { complete: false, wallet },
      { complete: true, wallet },
    ]);
    // client.query resolves once, with the whole screen.
    const { data } = await app.client.query({
      query: WalletScreenDocument,
      variables: { id: walletId },
      fetchPolicy: 'network-only',
    });
    expect(data?.wallet).toEqual(wallet);
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

/**
 * What docs/clients.md and the quick start say of Apollo Client 4 set up otherwise than the example:
 * the @defer traps a team meets on the way to its recipe (`incrementalHandler: new
 * Defer20220824Handler()`), and PersistedQueryLink with Apollo's own hashing; held here so the
 * pages stay true when @apollo/client is upgraded.
 */
const REFUSED =
  '`@defer` and `@stream` are not supported without specifying an incremental handler. Please pass a handler as the `incrementalHandler` option to the `ApolloClient` constructor.';

describe('Apollo Client 4 set up otherwise than the example: @defer pitfalls, APQ with its own hashing', () => {
  let t: TestGateway;
  let server: RunningServer;
  let key: string;
  let walletId: string;

  beforeAll(async () => {
    t = await startTestGateway();
    server = await listenOn(t);
    const merchant = await t.sandbox.world.merchant();
    recordSuiteKey(merchant.key);
    key = merchant.key;
    walletId = (await t.sandbox.world.wallet(merchant.id, { USDT: '100' })).id;
    await t.sandbox.world.deposit(walletId, { amount: '1.00' });
  });
  afterAll(async () => {
    await server.close(1_000);
    await t.close();
  });

  /** A bare Apollo Client with the given handler (none: Apollo's default); `sent` counts its requests. */
  function bareClient(incrementalHandler?: ApolloClient.Options['incrementalHandler']) {
    const sent: string[] = [];
    const link = new HttpLink({
      uri: `${server.url}/graphql`,
      headers: { authorization: `Bearer ${key}` },
      fetch: (url, init) => {
        sent.push(new Headers(init?.headers).get('accept') ?? '');
        return fetch(url, init);
      },
    });
    const client = new ApolloClient({
      link,
      cache: new InMemoryCache(),
      ...(incrementalHandler ? { incrementalHandler } : {}),
    });
    return { client, sent };
  }

  it('without an incremental handler, Apollo refuses the deferred document before sending it (invariant 70)', async () => {
    const { client, sent } = bareClient();
    // vitest resolves Apollo's `development` build, which has its messages.
    await expect(
      client.query({ query: WalletScreenDocument, variables: { id: walletId }, fetchPolicy: 'network-only' }),
    ).rejects.toThrow(REFUSED);
    expect(sent).toEqual([]);
    client.stop();
  });

  it('in a production build the refusal is an encoded link naming message 70; loadErrorMessages() writes it out', () => {
    // Plain Node, as `npm run example:apollo` and production bundles load Apollo: no messages.
    const script = `
      const { ApolloClient, HttpLink, InMemoryCache, gql } = await import('@apollo/client');
      const client = new ApolloClient({ link: new HttpLink({ uri: 'http://127.0.0.1:9/graphql' }), cache: new InMemoryCache() });
      const query = gql\`query Screen { wallets { totalCount ... @defer { nodes { id } } } }\`;
      const seen = [];
      for (const load of [false, true]) {
        if (load) (await import('@apollo/client/dev')).loadErrorMessages();
        seen.push(await client.query({ query }).then(() => 'sent', (error) => \`\${error.name}: \${error.message}\`));
      }
      console.log(JSON.stringify(seen));`;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: new URL('../../..', import.meta.url).pathname,
      encoding: 'utf8',
    });
    expect(JSON.parse(output)).toEqual([
      expect.stringMatching(
        /^Invariant Violation: An error occurred! For more details, see the full error text at https:\/\/go\.apollo\.dev\/c\/err#%7B%22version%22%3A%224\.[\d.]+%22%2C%22message%22%3A70%2C%22args%22%3A%5B%5D%7D$/,
      ),
      `Invariant Violation: ${REFUSED}`,
    ]);
  });

  it('with GraphQL17Alpha9Handler, Apollo asks, gets the first payload, and then loses the deferred lists', async () => {
    // A pitfall, documented: this handler reads the later incremental format (`pending`, `id`),
    // not the 2022 draft's `incremental: [{ data, path }]` the gateway sends.
    const { client, sent } = bareClient(new GraphQL17Alpha9Handler());
    const results: { dataState: string; keys: string[]; error?: string }[] = [];
    await new Promise<void>((resolve, reject) => {
      let subscription: { unsubscribe(): void } | undefined;
      subscription = client
        .watchQuery({ query: WalletScreenDocument, variables: { id: walletId }, fetchPolicy: 'network-only' })
        .subscribe({
          next: ({ data, dataState, error, loading }) => {
            if (dataState === 'empty') return;
            results.push({ dataState, keys: Object.keys(data?.wallet ?? {}), error: error?.message });
            if (!loading) {
              resolve();
              queueMicrotask(() => subscription?.unsubscribe());
            }
          },
          error: reject,
        });
    });
    const first = ['__typename', 'id', 'address', 'status', 'assets'];
    expect(results).toEqual([
      { dataState: 'streaming', keys: first, error: undefined },
      {
        dataState: 'complete',
        keys: first,
        error:
          'Could not find pending chunk for incremental value. Please file an issue for the Apollo Client team to investigate.',
      },
    ]);
    expect(sent).toEqual([expect.stringMatching(/^multipart\/mixed;incrementalSpec=v0\.2,/)]);
    client.stop();
  });

  it.each([
    'application/json',
    // Apollo's HttpLink's own `accept`, which a handler extends with multipart/mixed.
    'application/graphql-response+json,application/json;q=0.9',
  ])(
    'a deferred query with `accept: %s` (no multipart, no SSE) is answered 406 before anything runs, naming the types it takes',
    async (accept) => {
      const response = await post(server, key, accept, print(WalletScreenDocument), { id: walletId });
      expect(response.status).toBe(406);
      // The body says why, with its code (docs/errors.md).
      const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
      expect(body.errors).toEqual([
        {
          message: expect.stringMatching(/stream.*multipart\/mixed or text\/event-stream/),
          extensions: { code: 'NOT_ACCEPTABLE' },
        },
      ]);
    },
  );

  it("PersistedQueryLink with Apollo's own hashing (sha256 of its print) registers a document once, then sends its hash alone", async () => {
    // docs/quick-start.md offers it beside the example's codegen hashes, for a gateway without a manifest.
    const sent: { query?: string; extensions?: { persistedQuery?: { sha256Hash: string } } }[] = [];
    const http = new HttpLink({
      uri: `${server.url}/graphql`,
      headers: { authorization: `Bearer ${key}` },
      fetch: (url, init) => {
        sent.push(JSON.parse(String(init?.body)));
        return fetch(url, init);
      },
    });
    const persisted = new PersistedQueryLink({
      sha256: (text: string) => createHash('sha256').update(text).digest('hex'),
    });
    const client = new ApolloClient({ link: persisted.concat(http), cache: new InMemoryCache() });
    for (let i = 0; i < 2; i += 1) {
      const { data } = await client.query({ query: DashboardScreenDocument, fetchPolicy: 'network-only' });
      expect(data?.wallets?.totalCount).toBe(1);
    }
    // The hash alone (PersistedQueryNotFound), the hash with the text, then the hash alone again.
    expect(
      sent.map((body) => [body.query !== undefined, body.extensions?.persistedQuery !== undefined]),
    ).toEqual([
      [false, true],
      [true, true],
      [false, true],
    ]);
    client.stop();
  });

  it('the same query with multipart/mixed in `accept`, as Defer20220824Handler sends it, streams its parts', async () => {
    const response = await post(
      server,
      key,
      'multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json;q=0.9',
      print(WalletScreenDocument),
      { id: walletId },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);
    expect(await response.text()).toMatch(/"incremental":\[\{"data":\{"__typename":"Wallet","deposits"/);
  });
});
