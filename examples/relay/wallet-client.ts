/**
 * A wallet app's data layer with Relay: relay-runtime's Environment and store on the network layer
 * of examples/relay/network.ts, no React (a React app's hooks, useFragment and
 * usePaginationFragment, sit on these same calls). examples/relay/main.ts drives it
 * (`npm run example:relay`); tests run it against a gateway, and docs/clients.md shows this file whole.
 *
 * The operations are in examples/relay/operations/*.ts; relay-compiler (`npm run relay`, config
 * examples/relay/relay.config.json) writes their artifacts to examples/relay/generated/, with the
 * persisted-query manifest generated/persisted-queries.json.
 */
import {
  ConnectionHandler,
  commitMutation,
  createOperationDescriptor,
  Environment,
  fetchQuery,
  getSelector,
  type ReaderFragment,
  RecordSource,
  requestSubscription,
  Store,
} from 'relay-runtime';
import ActivityScreenFeed, {
  type ActivityScreen_query$data,
} from './generated/ActivityScreen_query.graphql.ts';
import ActivityScreenPaginationQuery, {
  type ActivityScreenPaginationQuery as ActivityPage,
} from './generated/ActivityScreenPaginationQuery.graphql.ts';
import ActivityScreenQuery, {
  type ActivityScreenQuery as Activity,
} from './generated/ActivityScreenQuery.graphql.ts';
import DashboardScreenQuery, {
  type DashboardScreenQuery as Dashboard,
} from './generated/DashboardScreenQuery.graphql.ts';
import WalletScreenWallet, {
  type WalletScreen_wallet$data,
} from './generated/WalletScreen_wallet.graphql.ts';
import WalletScreenDeposits, {
  type WalletScreenDeposits_wallet$data,
} from './generated/WalletScreenDeposits_wallet.graphql.ts';
import WalletScreenDepositsPaginationQuery, {
  type WalletScreenDepositsPaginationQuery as DepositsPage,
} from './generated/WalletScreenDepositsPaginationQuery.graphql.ts';
import WalletScreenQuery, {
  type WalletScreenQuery as WalletScreenOperation,
} from './generated/WalletScreenQuery.graphql.ts';
import WalletScreenRefetchQuery, {
  type WalletScreenRefetchQuery as WalletRefetch,
} from './generated/WalletScreenRefetchQuery.graphql.ts';
import WalletScreenWithdrawals, {
  type WalletScreenWithdrawals_wallet$data,
} from './generated/WalletScreenWithdrawals_wallet.graphql.ts';
import WithdrawalStatusScreenSubscription, {
  type WithdrawalStatusScreenSubscription as WithdrawalStatus,
} from './generated/WithdrawalStatusScreenSubscription.graphql.ts';
import WithdrawScreenMutation, {
  type CreateWithdrawalIntentInput,
  type WithdrawScreenMutation as Withdraw,
} from './generated/WithdrawScreenMutation.graphql.ts';
import { createNetwork } from './network.ts';

export function createWalletClient(
  gatewayURL: string,
  apiKey: string,
  options: { documentIds?: boolean } = {},
) {
  const network = createNetwork({ gatewayURL, apiKey, documentIds: options.documentIds });
  const environment = new Environment({ network, store: new Store(new RecordSource()) });
  return { environment, close: () => {} };
}

/** A fragment's data for `ref` as the store holds it now, and whether some of it has not come yet. */
function readFragment<T>(environment: Environment, fragment: ReaderFragment, ref: unknown) {
  const selector = getSelector(fragment, ref);
  if (selector?.kind !== 'SingularReaderSelector') throw new Error(`${fragment.name}: nothing to read`);
  const snapshot = environment.lookup(selector);
  return { data: snapshot.data as T, missing: snapshot.isMissingData };
}

/** The dashboard: every wallet with its balances. */
export async function loadDashboard(environment: Environment) {
  const data = await fetchQuery<Dashboard>(environment, DashboardScreenQuery, {}).toPromise();
  if (!data?.wallets) throw new Error('The dashboard came back without wallets.');
  return data.wallets;
}

type Deposit = NonNullable<WalletScreenDeposits_wallet$data['deposits']>['edges'][number]['node'];
type Withdrawal = NonNullable<
  WalletScreenWithdrawals_wallet$data['withdrawalIntents']
>['edges'][number]['node'];
export interface WalletScreen {
  wallet: Omit<WalletScreen_wallet$data, ' $fragmentType'> & {
    /** Absent until its deferred part has come. */
    deposits?: { totalCount: number | null | undefined; nodes: Deposit[] } | null;
    withdrawalIntents?: { nodes: Withdrawal[] } | null;
  };
  complete: boolean;
}

/**
 * One wallet's screen as the store holds it now (no request): the wallet's balances, and each
 * list whose deferred part has come (`complete` when all have). Null when the store has no such wallet.
 */
export function readWalletScreen(environment: Environment, id: string): WalletScreen | null {
  const query = environment.lookup(createOperationDescriptor(WalletScreenQuery, { id }).fragment);
  const ref = (query.data as WalletScreenOperation['response'] | null)?.wallet;
  if (!ref) return null;
  const wallet = readFragment<WalletScreen_wallet$data>(environment, WalletScreenWallet, ref);
  const deposits = readFragment<WalletScreenDeposits_wallet$data>(environment, WalletScreenDeposits, ref);
  const withdrawals = readFragment<WalletScreenWithdrawals_wallet$data>(
    environment,
    WalletScreenWithdrawals,
    ref,
  );
  const { ' $fragmentType': _, ...balances } = wallet.data;
  return {
    wallet: {
      ...balances,
      ...(deposits.missing
        ? {}
        : {
            deposits: deposits.data.deposits && {
              totalCount: deposits.data.deposits.totalCount,
              nodes: deposits.data.deposits.edges.map((edge) => edge.node),
            },
          }),
      ...(withdrawals.missing
        ? {}
        : {
            withdrawalIntents: withdrawals.data.withdrawalIntents && {
              nodes: withdrawals.data.withdrawalIntents.edges.map((edge) => edge.node),
            },
          }),
    },
    complete: !wallet.missing && !deposits.missing && !withdrawals.missing,
  };
}

/**
 * One wallet's screen under @defer: `show` gets the screen as the store has it after each payload
 * (`complete: false`): the balances first, then each list as its part comes; then the whole screen
 * once the answer has ended (`complete: true`), with which it resolves. On a later visit the store
 * still has the lists of the last one, so the first payload shows those until their parts come:
 * only the end of the answer says the screen is current.
 */
export function loadWalletScreen(
  environment: Environment,
  id: string,
  show: (screen: WalletScreen) => void = () => {},
): Promise<WalletScreen['wallet']> {
  return new Promise((resolve, reject) => {
    fetchQuery<WalletScreenOperation>(
      environment,
      WalletScreenQuery,
      { id },
      { fetchPolicy: 'network-only' },
    ).subscribe({
      next: () => {
        const screen = readWalletScreen(environment, id);
        if (!screen) return reject(new Error(`No wallet ${id}.`));
        show({ wallet: screen.wallet, complete: false });
      },
      error: reject,
      complete: () => {
        const screen = readWalletScreen(environment, id);
        if (!screen?.complete) return reject(new Error(`Wallet ${id}: the screen is incomplete.`));
        show(screen);
        resolve(screen.wallet);
      },
    });
  });
}

/** The wallet's balances again, through `node(id:)`: the store's wallet (every screen showing it) is updated. */
export async function refetchWallet(environment: Environment, id: string) {
  const data = await fetchQuery<WalletRefetch>(
    environment,
    WalletScreenRefetchQuery,
    { id },
    { fetchPolicy: 'network-only' },
  ).toPromise();
  if (!data?.node) throw new Error(`No wallet ${id}.`);
  const { ' $fragmentType': _, ...wallet } = readFragment<WalletScreen_wallet$data>(
    environment,
    WalletScreenWallet,
    data.node,
  ).data;
  return wallet;
}

/**
 * The wallet's deposits scrolled to the end, `pageSize` at a time: `forward` from the newest
 * (`first`, then `after` the connection's endCursor), `backward` from the oldest (`last`, then
 * `before` its startCursor). Each page is fetched with fetchQuery; Relay's connection handler
 * appends (or prepends) it to the connection in the store, which is read back after each page:
 * `pages` counts the deposits shown after each, `deposits` is the merged list, newest first.
 */
export async function pageWalletDeposits(
  environment: Environment,
  id: string,
  pageSize: number,
  direction: 'forward' | 'backward',
) {
  const pages: number[] = [];
  let connection: NonNullable<WalletScreenDeposits_wallet$data['deposits']> | null | undefined;
  do {
    const info = connection?.pageInfo;
    const variables: DepositsPage['variables'] =
      direction === 'forward'
        ? { id, first: pageSize, after: info?.endCursor ?? null, last: null, before: null }
        : { id, first: null, after: null, last: pageSize, before: info?.startCursor ?? null };
    const data = await fetchQuery<DepositsPage>(
      environment,
      WalletScreenDepositsPaginationQuery,
      variables,
    ).toPromise();
    if (!data?.node) throw new Error(`No wallet ${id}.`);
    connection = readFragment<WalletScreenDeposits_wallet$data>(environment, WalletScreenDeposits, data.node)
      .data.deposits;
    if (!connection) throw new Error(`Wallet ${id}: its deposits could not be read.`);
    pages.push(connection.edges.length);
  } while (direction === 'forward' ? connection.pageInfo.hasNextPage : connection.pageInfo.hasPreviousPage);
  return { totalCount: connection.totalCount, pages, deposits: connection.edges.map((edge) => edge.node) };
}

type FeedDeposit = NonNullable<ActivityScreen_query$data['deposits']>['edges'][number]['node'];

/**
 * The activity feed scrolled down `pages` times, each page after the connection's endCursor; the
 * feed is the merged connection read from the store. A deposit's `wallet` is caught (`@catch`):
 * when its call failed, the deposit is shown without it and `walletError` says why.
 */
export async function loadActivity(environment: Environment, pageSize: number, pages: number) {
  const first = await fetchQuery<Activity>(
    environment,
    ActivityScreenQuery,
    { first: pageSize },
    { fetchPolicy: 'network-only' },
  ).toPromise();
  if (!first) throw new Error('The activity feed came back empty.');
  const read = (ref: unknown) =>
    readFragment<ActivityScreen_query$data>(environment, ActivityScreenFeed, ref).data.deposits;
  let deposits = read(first);
  if (!deposits) throw new Error('The activity feed came back without deposits.');
  const loaded = [{ shown: deposits.edges.length, hasNextPage: deposits.pageInfo.hasNextPage }];
  while (loaded.length < pages && deposits.pageInfo.hasNextPage) {
    const next = await fetchQuery<ActivityPage>(environment, ActivityScreenPaginationQuery, {
      first: pageSize,
      after: deposits.pageInfo.endCursor ?? null,
    }).toPromise();
    deposits = read(next);
    if (!deposits) throw new Error('The activity feed came back without deposits.');
    loaded.push({ shown: deposits.edges.length, hasNextPage: deposits.pageInfo.hasNextPage });
  }
  return {
    totalCount: deposits.totalCount ?? null,
    pages: loaded,
    feed: deposits.edges.map(({ node }: { node: FeedDeposit }) => {
      const { wallet, ...deposit } = node;
      return wallet.ok
        ? { ...deposit, wallet: wallet.value ?? null, walletError: null }
        : { ...deposit, wallet: null, walletError: wallet.errors };
    }),
  };
}

export type WithdrawalResult =
  | { intent: { id: string; restId: string; status: string; amountFee: string; amountGross: string } }
  | { failure: { code: string; message: string; field?: readonly string[] | null } };

/**
 * The withdraw form: the new intent, or the business failure to show beside the form. A new
 * intent is put first in the wallet screen's withdrawals in the store (`@prependNode` into the
 * connection named by the wallet's id and the connection's key).
 */
export function withdraw(
  environment: Environment,
  input: CreateWithdrawalIntentInput,
): Promise<WithdrawalResult> {
  const connections = [ConnectionHandler.getConnectionID(input.walletId, 'WalletScreen_withdrawalIntents')];
  return new Promise((resolve, reject) => {
    commitMutation<Withdraw>(environment, {
      mutation: WithdrawScreenMutation,
      variables: { input, connections },
      onError: reject,
      onCompleted: ({ createWithdrawalIntent: result }) => {
        if (result.__typename === 'CreateWithdrawalIntentSuccess' && result.withdrawalIntent)
          return resolve({ intent: result.withdrawalIntent });
        // Every other member implements UserError: code for the program, message for people.
        if (result.code === undefined || result.message === undefined)
          return reject(new Error(`Unexpected result ${result.__typename}.`));
        const field = result.__typename === 'DataInvalidError' ? { field: result.field } : {};
        resolve({ failure: { code: result.code, message: result.message, ...field } });
      },
    });
  });
}

type WithdrawalUpdate = WithdrawalStatus['response']['withdrawalIntentUpdated'];

/**
 * The withdrawal's status screen: `show` gets the intent now, then at each change. `done` resolves
 * at a final status (after which the gateway ends the stream); `stop()` leaves earlier.
 */
export function watchWithdrawal(
  environment: Environment,
  id: string,
  show: (intent: WithdrawalUpdate) => void,
) {
  let stop = () => {};
  const done = new Promise<void>((resolve, reject) => {
    const subscription = requestSubscription<WithdrawalStatus>(environment, {
      subscription: WithdrawalStatusScreenSubscription,
      variables: { id },
      onNext: (response) => {
        if (!response) return;
        show(response.withdrawalIntentUpdated);
        if (FINAL.has(response.withdrawalIntentUpdated.status)) resolve();
      },
      onError: reject,
    });
    stop = () => subscription.dispose();
  });
  return { done, stop: () => stop() };
}

const FINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);
