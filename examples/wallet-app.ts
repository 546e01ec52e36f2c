/**
 * A wallet app's data layer with Apollo Client 4, as the README's "Use it from your app" shows it.
 * test/integration/gateway/wallet-app.test.ts runs it against a listening gateway, so it cannot rot.
 *
 * Typed documents come from `npm run codegen` (client preset, `persistedDocuments`): each carries
 * its manifest hash, so production can run with PERSISTED_DOCUMENTS_MODE=enforce. An app
 * generates its own from its own .graphql files against schema/schema.graphql.
 */
import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition, relayStylePagination } from '@apollo/client/utilities';
import type { DocumentNode } from 'graphql';
import { createClient } from 'graphql-ws';
import introspection from '../schema/possible-types.json' with { type: 'json' };
import {
  ActivityFeedDocument,
  type ActivityFeedQuery,
  CreateWithdrawalDocument,
  type CreateWithdrawalIntentInput,
  WatchWithdrawalDocument,
} from '../test/generated/graphql.ts';

export function createWalletClient(gatewayURL: string, apiKey: string) {
  const authorization = `Bearer ${apiKey}`;
  // Every operation names its manifest document by hash (APQ): over HTTP without its text.
  const persisted = new PersistedQueryLink({
    generateHash: (document: DocumentNode) =>
      (document as { __meta__?: { hash: string } }).__meta__?.hash ?? '',
  });
  const http = new HttpLink({ uri: `${gatewayURL}/graphql`, headers: { authorization } });
  // Subscriptions over one WebSocket; the key goes in connection_init (browsers cannot set headers).
  const sockets = createClient({
    url: `${gatewayURL.replace(/^http/, 'ws')}/graphql`,
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
    // Pages of a connection merge into one list, per filter.
    typePolicies: { Query: { fields: { deposits: relayStylePagination(['status']) } } },
  });
  return {
    client: new ApolloClient({ link, cache }),
    close: () => sockets.dispose(),
  };
}

type WalletClient = ReturnType<typeof createWalletClient>['client'];

/** The activity feed, `pages` pages of `pageSize`: each page after the last one's endCursor. */
export async function loadActivity(client: WalletClient, pageSize: number, pages: number) {
  let after: string | null = null;
  for (let page = 0; page < pages; page += 1) {
    const { data }: { data?: ActivityFeedQuery } = await client.query({
      query: ActivityFeedDocument,
      variables: { first: pageSize, after },
      // The merged list in the cache would answer a later page from memory: ask the gateway.
      fetchPolicy: 'network-only',
    });
    after = data?.deposits?.pageInfo.endCursor ?? null;
    if (!data?.deposits?.pageInfo.hasNextPage) break;
  }
  // The cache merged the pages: one list, as a screen scrolled down would show it.
  const merged = client.readQuery({ query: ActivityFeedDocument, variables: { first: pageSize } });
  return merged?.deposits?.edges.map((edge) => edge.node.id) ?? [];
}

/** A withdrawal: the new intent's id, or the business failure the screen shows. */
export async function withdraw(
  client: WalletClient,
  input: CreateWithdrawalIntentInput,
): Promise<{ intentId: string } | { failure: { code: string; message: string; field?: string[] | null } }> {
  const { data } = await client.mutate({ mutation: CreateWithdrawalDocument, variables: { input } });
  const result = data?.createWithdrawalIntent;
  if (!result) throw new Error('no result');
  switch (result.__typename) {
    case 'CreateWithdrawalIntentSuccess':
      return { intentId: result.withdrawalIntent.id };
    case 'DataInvalidError':
      return { failure: { code: result.code, message: result.message, field: result.field } };
    default:
      // Every other member implements UserError: code for the program, message for people.
      return { failure: { code: result.code, message: result.message } };
  }
}

/** A withdrawal screen: `show` gets each status; resolves after a final one, when the gateway ends the stream. */
export function watchWithdrawal(
  client: WalletClient,
  intentId: string,
  show: (status: string) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    client.subscribe({ query: WatchWithdrawalDocument, variables: { intentId } }).subscribe({
      next: ({ data, error }) => {
        if (error) reject(error);
        else if (data) show(data.withdrawalIntentUpdated.status);
      },
      error: reject,
      complete: resolve,
    });
  });
}
