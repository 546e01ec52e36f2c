/**
 * A wallet app's data layer with urql: @urql/core, @urql/exchange-graphcache (a normalised cache)
 * and graphql-sse for subscriptions. examples/urql/main.ts drives it (`npm run example:urql`);
 * tests run it against a gateway, and docs/clients.md shows this file whole.
 *
 * The typed documents are this app's own operations (examples/urql/operations/*.graphql), generated
 * by `npm run codegen` (codegen.ts, target examples/urql/generated/).
 */
import { Client, fetchExchange, subscriptionExchange } from '@urql/core';
import { cacheExchange } from '@urql/exchange-graphcache';
import { relayPagination } from '@urql/exchange-graphcache/extras';
import { createClient as createSSEClient } from 'graphql-sse';
import introspection from '../../schema/introspection.json' with { type: 'json' };
import { cacheKeys } from './cache-keys.ts';
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

export function createWalletClient(gatewayURL: string, apiKey: string) {
  const headers = { authorization: `Bearer ${apiKey}` };
  // Subscriptions over GraphQL over SSE, one HTTP response per subscription (graphql-sse's
  // "distinct connections" mode, which the gateway serves at /graphql), the key in its header.
  const sse = createSSEClient({ url: `${gatewayURL}/graphql`, headers });
  const client = new Client({
    url: `${gatewayURL}/graphql`,
    // Queries go as GET (urql's default); with the Authorization header the gateway needs no CSRF header.
    fetchOptions: { headers },
    exchanges: [
      cacheExchange({
        // The schema tells graphcache the union's members: without it, `... on UserError` matches
        // nothing it can check, and `code` and `message` are dropped from the mutation's failures.
        schema: introspection,
        // Every type without an id kept inside its parent (cache-keys.ts), read from the same schema.
        keys: cacheKeys(introspection),
        // The pages of a connection merge into one list, per filter.
        resolvers: { Query: { deposits: relayPagination() } },
      }),
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({
            unsubscribe: sse.subscribe({ ...request, query: request.query ?? '' }, sink),
          }),
        }),
      }),
    ],
  });
  return { client, close: () => sse.dispose() };
}

/** The dashboard: every wallet with its balances. */
export async function loadDashboard(client: Client) {
  const { data, error } = await client
    .query(DashboardScreenDocument, {}, { requestPolicy: 'network-only' })
    .toPromise();
  if (error || !data?.wallets) throw error ?? new Error('The dashboard came back without wallets.');
  return data.wallets;
}

/**
 * The activity feed scrolled down `pages` times: each page asked after the previous one's
 * endCursor. relayPagination merges the pages into one list (newest first), so each answer is the
 * whole feed so far, as the screen shows it.
 */
export async function loadActivity(client: Client, pageSize: number, pages: number) {
  const loaded: { shown: number; hasNextPage: boolean; endCursor: string | null }[] = [];
  let totalCount: number | null = null;
  while (loaded.length < pages && (loaded.at(-1)?.hasNextPage ?? true)) {
    const { data, error } = await client
      .query(ActivityScreenDocument, { first: pageSize, after: loaded.at(-1)?.endCursor ?? null })
      .toPromise();
    if (error || !data?.deposits) throw error ?? new Error('The activity feed came back without deposits.');
    const { edges, pageInfo } = data.deposits;
    totalCount = data.deposits.totalCount;
    loaded.push({ shown: edges.length, hasNextPage: pageInfo.hasNextPage, endCursor: pageInfo.endCursor });
  }
  const merged = client.readQuery(ActivityScreenDocument, { first: pageSize });
  return { totalCount, pages: loaded, feed: merged?.data?.deposits?.edges.map((edge) => edge.node) ?? [] };
}

type WalletScreen = NonNullable<WalletScreenQuery['wallet']>;

/**
 * One wallet's screen, deferred: `show` gets the wallet with its balances as soon as the first
 * payload comes (`complete: false`, no lists yet), then the whole screen when its deposits and
 * withdrawals follow (`complete: true`). fetchExchange reads the gateway's multipart/mixed answer
 * as it is (its `accept` offers it); a result with `hasNext` is a part, the last one has none.
 * Resolves with the whole screen.
 */
export function loadWalletScreen(
  client: Client,
  id: string,
  show: (screen: { wallet: WalletScreen; complete: boolean }) => void = () => {},
) {
  let unsubscribe = () => {};
  const screen = new Promise<WalletScreen>((resolve, reject) => {
    ({ unsubscribe } = client
      .query(WalletScreenDocument, { id }, { requestPolicy: 'network-only' })
      .subscribe(({ data, error, hasNext }) => {
        if (error) return reject(error);
        if (!data?.wallet) return reject(new Error(`No wallet ${id}.`));
        show({ wallet: data.wallet, complete: !hasNext });
        if (!hasNext) resolve(data.wallet);
      }));
  });
  return screen.finally(() => unsubscribe());
}

export type WithdrawalResult =
  | { intent: { id: string; restId: string; status: string; amountFee: string; amountGross: string } }
  | { failure: { code: string; message: string; field?: string[] | null } };

/** The withdraw form: the new intent, or the business failure to show beside the form. */
export async function withdraw(
  client: Client,
  input: CreateWithdrawalIntentInput,
): Promise<WithdrawalResult> {
  const { data, error } = await client.mutation(WithdrawScreenDocument, { input }).toPromise();
  const result = data?.createWithdrawalIntent;
  if (error || !result) throw error ?? new Error('The withdrawal came back without a result.');
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
 * at a final status (after which the gateway ends the stream); `stop()` leaves earlier.
 */
export function watchWithdrawal(client: Client, id: string, show: (intent: WithdrawalStatus) => void) {
  let stop = () => {};
  const done = new Promise<void>((resolve, reject) => {
    let shown: string | undefined;
    const { unsubscribe } = client
      .subscription(WithdrawalStatusScreenDocument, { id })
      .subscribe((result) => {
        if (result.error) return reject(result.error);
        if (!result.data) return;
        const intent = result.data.withdrawalIntentUpdated;
        // When the stream ends, urql hands on its last result once more (`hasNext: false`):
        // show each status once, so a "completed" handler does not run twice.
        if (intent.status === shown) return;
        shown = intent.status;
        show(intent);
        if (FINAL.has(intent.status)) resolve();
      });
    stop = unsubscribe;
  });
  return { done, stop: () => stop() };
}

const FINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);
