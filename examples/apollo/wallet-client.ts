/**
 * A wallet app's data layer with Apollo Client 4: the client, and what each screen asks of it.
 * examples/apollo/main.ts drives it (`npm run example:apollo`); tests run it against a gateway with
 * and without a manifest, and docs/clients.md shows this file whole.
 *
 * The typed documents are this app's own operations (examples/apollo/operations/*.graphql), turned
 * by `npm run codegen` (codegen.ts, target examples/apollo/generated/) into typed documents with the
 * client preset: `persistedDocuments` gives each its manifest hash (`__meta__.hash`), and
 * `addTypenameSelectionDocumentTransform` writes the `__typename`s Apollo adds anyway, so the
 * manifest holds exactly what Apollo sends and what its cache needs back.
 */
import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition, relayStylePagination } from '@apollo/client/utilities';
import type { DocumentNode } from 'graphql';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import {
  ActivityScreenDocument,
  type CreateWithdrawalIntentInput,
  DashboardScreenDocument,
  WalletScreenDocument,
  type WalletScreenQuery,
  WithdrawalStatusScreenDocument,
  type WithdrawalStatusScreenSubscription,
  WithdrawScreenDocument,
} from './generated/graphql.ts';
import introspection from './generated/possible-types.json' with { type: 'json' };

export function createWalletClient(gatewayURL: string, apiKey: string) {
  const authorization = `Bearer ${apiKey}`;
  // Every operation goes out as its codegen hash alone (APQ). A gateway running this app's manifest
  // answers at once; one without it asks for the text once (PersistedQueryNotFound), and the link
  // resends it with the same hash, which the gateway accepts as codegen's hash of that text.
  const persisted = new PersistedQueryLink({
    generateHash: (document: DocumentNode) => {
      const hash = (document as { __meta__?: { hash?: string } }).__meta__?.hash;
      if (!hash) throw new Error('A document without its codegen hash: import it from ./generated/.');
      return hash;
    },
  });
  const http = new HttpLink({ uri: `${gatewayURL}/graphql`, headers: { authorization } });
  // Subscriptions over one WebSocket; the key goes in connection_init (browsers cannot set headers).
  // `ws` as the implementation: Node before 22 has no global WebSocket (graphql-ws would fail with
  // "WebSocket implementation missing"); in a browser, leave webSocketImpl out.
  const sockets = createClient({
    url: `${gatewayURL.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: authorization },
  });
  const link = persisted.split(
    ({ query }) => {
      const definition = getMainDefinition(query);
      return definition.kind === 'OperationDefinition' && definition.operation === 'subscription';
    },
    new GraphQLWsLink(sockets),
    http,
  );
  const cache = new InMemoryCache({
    // Without possibleTypes the cache drops `code` and `message` selected through `... on UserError`.
    possibleTypes: introspection.possibleTypes,
    // The pages of a connection merge into one list, per filter.
    typePolicies: { Query: { fields: { deposits: relayStylePagination(['status']) } } },
  });
  const client = new ApolloClient({
    link,
    cache,
    // @defer: the gateway answers a deferred query in parts over multipart/mixed, in the format of
    // the 2022 @defer draft (`incremental: [{ data, path }]`), which is what this handler reads; it
    // also puts `multipart/mixed;deferSpec=20220824` in `accept`. Without a handler Apollo refuses
    // to send a deferred document (invariant 70); GraphQL17Alpha9Handler reads a later format and
    // drops the deferred parts.
    incrementalHandler: new Defer20220824Handler(),
  });
  return {
    client,
    close: async () => {
      client.stop();
      await sockets.dispose();
    },
  };
}

type WalletClient = ReturnType<typeof createWalletClient>['client'];

/** The dashboard: every wallet with its balances. */
export async function loadDashboard(client: WalletClient) {
  const { data } = await client.query({ query: DashboardScreenDocument, fetchPolicy: 'network-only' });
  if (!data?.wallets) throw new Error('The dashboard came back without wallets.');
  return data.wallets;
}

/**
 * The activity feed scrolled down `pages` times: each page asked after the previous one's
 * endCursor. The cache merges the pages into one list (newest first), so each answer is the whole
 * feed so far, as the screen shows it.
 */
export async function loadActivity(client: WalletClient, pageSize: number, pages: number) {
  const loaded: { shown: number; hasNextPage: boolean; endCursor: string | null }[] = [];
  let totalCount: number | null = null;
  while (loaded.length < pages && (loaded.at(-1)?.hasNextPage ?? true)) {
    const { data } = await client.query({
      query: ActivityScreenDocument,
      variables: { first: pageSize, after: loaded.at(-1)?.endCursor ?? null },
      // The merged list in the cache would answer a later page from memory: ask the gateway.
      fetchPolicy: 'network-only',
    });
    if (!data?.deposits) throw new Error('The activity feed came back without deposits.');
    const { edges, pageInfo } = data.deposits;
    totalCount = data.deposits.totalCount;
    loaded.push({ shown: edges.length, hasNextPage: pageInfo.hasNextPage, endCursor: pageInfo.endCursor });
  }
  const merged = client.readQuery({ query: ActivityScreenDocument, variables: { first: pageSize } });
  return { totalCount, pages: loaded, feed: merged?.deposits?.edges.map((edge) => edge.node) ?? [] };
}

type WalletScreen = NonNullable<WalletScreenQuery['wallet']>;

/**
 * One wallet's screen, deferred: `show` gets the wallet with its balances as soon as the first
 * payload comes (`complete: false`: no lists yet, or the ones cached from an earlier visit), then
 * the whole screen when its deposits and withdrawals follow (`complete: true`). Resolves with the
 * whole screen.
 */
export function loadWalletScreen(
  client: WalletClient,
  id: string,
  show: (screen: { wallet: WalletScreen; complete: boolean }) => void = () => {},
) {
  let subscription: { unsubscribe(): void } | undefined;
  const screen = new Promise<WalletScreen>((resolve, reject) => {
    subscription = client
      .watchQuery({ query: WalletScreenDocument, variables: { id }, fetchPolicy: 'network-only' })
      .subscribe({
        next: ({ data, dataState, loading, error }) => {
          if (error) return reject(error);
          // 'empty': asked, nothing come yet ('partial' needs returnPartialData, not asked for).
          if (dataState !== 'streaming' && dataState !== 'complete') return;
          if (!data.wallet) return reject(new Error(`No wallet ${id}.`));
          // While `loading`, a part is still on its way: the first payload has come ('streaming'
          // when the lists are absent; 'complete' when the cache had them from an earlier visit).
          show({ wallet: data.wallet, complete: !loading });
          if (!loading) resolve(data.wallet);
        },
        error: reject,
      });
  });
  return screen.finally(() => subscription?.unsubscribe());
}

export type WithdrawalResult =
  | { intent: { id: string; restId: string; status: string; amountFee: string; amountGross: string } }
  | { failure: { code: string; message: string; field?: string[] | null } };

/** The withdraw form: the new intent, or the business failure to show beside the form. */
export async function withdraw(
  client: WalletClient,
  input: CreateWithdrawalIntentInput,
): Promise<WithdrawalResult> {
  const { data } = await client.mutate({ mutation: WithdrawScreenDocument, variables: { input } });
  const result = data?.createWithdrawalIntent;
  if (!result) throw new Error('The withdrawal came back without a result.');
  switch (result.__typename) {
    case 'CreateWithdrawalIntentSuccess':
      return { intent: result.withdrawalIntent };
    case 'DataInvalidError':
      return { failure: { code: result.code, message: result.message, field: result.field } };
    default:
      // Every other member implements UserError: code for the program, message for people.
      return { failure: { code: result.code, message: result.message } };
  }
}

type WithdrawalStatus = WithdrawalStatusScreenSubscription['withdrawalIntentUpdated'];

/**
 * The withdrawal's status screen: `show` gets the intent now, then at each change. `done` resolves
 * when the gateway ends the stream after a final status; `stop()` leaves earlier.
 */
export function watchWithdrawal(client: WalletClient, id: string, show: (intent: WithdrawalStatus) => void) {
  let subscription: { unsubscribe(): void } | undefined;
  const done = new Promise<void>((resolve, reject) => {
    subscription = client.subscribe({ query: WithdrawalStatusScreenDocument, variables: { id } }).subscribe({
      next: ({ data, error }) => {
        if (error) reject(error);
        else if (data) show(data.withdrawalIntentUpdated);
      },
      error: reject,
      complete: resolve,
    });
  });
  return { done, stop: () => subscription?.unsubscribe() };
}
