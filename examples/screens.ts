/**
 * What both example apps' entry points do with their data layer (examples/apollo/wallet-client.ts,
 * examples/urql/wallet-client.ts), printing what each screen would show: the dashboard, the first
 * wallet's screen under @defer (its balances, then its lists), two pages of the activity feed, a withdrawal the gateway refuses, one it creates (with an idempotency key),
 * and that withdrawal's status, live, until it is final or WATCH_SECONDS have passed.
 *
 * GATEWAY_URL   the gateway, default http://localhost:4000 (`npm start`)
 * API_KEY       default: the demo key `npm start` prints (the sandbox's Acme Coffee, read-write)
 * WATCH_SECONDS how long to watch the withdrawal for a final status, default 60
 */
import { randomUUID } from 'node:crypto';

interface Amounts {
  availableAmount: string;
  lockedAmount: string;
}
interface Withdrawal {
  walletId: string;
  serviceFeeMode: 'EXCLUSIVE';
  currencyCode: string;
  amount: string;
  idempotencyKey?: string;
  destination: { type: string; rail: string; identifier: string };
}
type WithdrawalResult =
  | { intent: { id: string; restId: string; status: string; amountFee: string; amountGross: string } }
  | { failure: { code: string; message: string; field?: string[] | null } };

/** The data layer's functions, bound to its client. */
export interface WalletScreens {
  loadDashboard(): Promise<{
    totalCount: number | null;
    nodes: {
      id: string;
      address: string;
      status: string;
      assets: { currencyCode: string; balance: Amounts }[];
    }[];
  }>;
  loadActivity(
    pageSize: number,
    pages: number,
  ): Promise<{
    totalCount: number | null;
    pages: { shown: number; hasNextPage: boolean }[];
    feed: {
      createdAt: string;
      status: string;
      amount: string;
      currencyCode: string;
      wallet?: { address: string } | null;
    }[];
  }>;
  /** One wallet's screen under @defer: `show` gets the balances first, then the whole screen. */
  loadWalletScreen?(
    id: string,
    show: (screen: {
      wallet: {
        assets: { currencyCode: string; balance: Amounts }[];
        deposits?: { nodes: unknown[] } | null;
        withdrawalIntents?: { nodes: unknown[] } | null;
      };
      complete: boolean;
    }) => void,
  ): Promise<unknown>;
  withdraw(input: Withdrawal): Promise<WithdrawalResult>;
  watchWithdrawal(
    id: string,
    show: (intent: { status: string; updatedAt: string }) => void,
  ): { done: Promise<void>; stop(): void };
  close(): Promise<void> | void;
}

// An address outside the platform: a withdrawal to it is an ordinary external one.
const DESTINATION = 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7';

/** A decimal string as a screen shows it: at least 2 decimals, no trailing zeros past them. */
const amount = (value: string) => {
  const [whole, fraction = ''] = value.split('.');
  return `${whole}.${fraction.replace(/0+$/, '').padEnd(2, '0')}`;
};
const balancesOf = (assets: { currencyCode: string; balance: Amounts }[]) =>
  assets.map(
    ({ currencyCode, balance }) =>
      `${currencyCode} ${amount(balance.availableAmount)} (locked ${amount(balance.lockedAmount)})`,
  );
const short = (address: string) => `${address.slice(0, 6)}…${address.slice(-4)}`;

export async function runScreens(
  name: string,
  transport: string,
  connect: (gatewayURL: string, apiKey: string) => WalletScreens,
): Promise<void> {
  const gatewayURL = (process.env.GATEWAY_URL ?? 'http://localhost:4000').replace(/\/(graphql)?$/, '');
  const apiKey = process.env.API_KEY ?? 'mw_sandbox_demo_acme_read_write';
  const watchSeconds = Number(process.env.WATCH_SECONDS ?? 60);
  console.log(`${name} example: ${gatewayURL}/graphql on Node ${process.version}\n`);
  const app = connect(gatewayURL, apiKey);
  try {
    const wallets = await app.loadDashboard();
    console.log(`Dashboard: ${wallets.totalCount} wallets`);
    for (const wallet of wallets.nodes) {
      console.log(`  ${short(wallet.address)}  ${wallet.status}  ${balancesOf(wallet.assets).join('  ')}`);
    }

    const first = wallets.nodes[0];
    if (app.loadWalletScreen && first) {
      // The first payload (balances) is shown before the lists it defers have come.
      console.log(`\nWallet ${short(first.address)}, its lists deferred:`);
      await app.loadWalletScreen(first.id, ({ wallet, complete }) => {
        if (!complete) console.log(`  first: ${balancesOf(wallet.assets).join('  ')}`);
        else
          console.log(
            `  then: ${wallet.deposits?.nodes.length ?? 0} latest deposits, ${wallet.withdrawalIntents?.nodes.length ?? 0} latest withdrawals`,
          );
      });
    }

    const activity = await app.loadActivity(5, 2);
    console.log(`\nActivity: ${activity.totalCount} deposits`);
    activity.pages.forEach((page, index) => {
      console.log(`  page ${index + 1} loaded: ${page.shown} shown${page.hasNextPage ? ', more below' : ''}`);
    });
    for (const deposit of activity.feed) {
      console.log(
        `    ${deposit.createdAt}  ${deposit.status}  ${amount(deposit.amount)} ${deposit.currencyCode} to ${short(deposit.wallet?.address ?? '?')}`,
      );
    }

    const from = wallets.nodes.find((wallet) => wallet.assets.some((asset) => asset.currencyCode === 'USDT'));
    if (!from) throw new Error('No wallet holds USDT: nothing to withdraw from.');
    const input: Withdrawal = {
      walletId: from.id,
      serviceFeeMode: 'EXCLUSIVE',
      currencyCode: 'USDT',
      amount: '1.00',
      destination: { type: 'crypto', rail: 'tron', identifier: DESTINATION },
    };

    // A form filled in wrong: the gateway answers with a typed failure, not an error.
    console.log(`\nWithdraw 1.005 USDT from ${short(from.address)}`);
    const refused = await app.withdraw({ ...input, amount: '1.005' });
    if ('failure' in refused) {
      const field = refused.failure.field ? ` (field ${refused.failure.field.join('.')})` : '';
      console.log(`  refused: ${refused.failure.code}${field}: ${refused.failure.message}`);
    } else {
      console.log(`  unexpectedly created ${refused.intent.restId}`);
    }

    // One key per confirmation: a retry with it (after a lost answer) returns this intent, not a second one.
    const idempotencyKey = `example-${randomUUID()}`;
    console.log(`\nWithdraw 1.00 USDT from ${short(from.address)} to ${short(DESTINATION)}`);
    const created = await app.withdraw({ ...input, idempotencyKey });
    if (!('intent' in created)) {
      console.log(`  refused: ${created.failure.code}: ${created.failure.message}`);
      process.exitCode = 1;
      return;
    }
    const { intent } = created;
    console.log(`  idempotency key ${idempotencyKey}`);
    console.log(
      `  created withdrawal ${intent.restId}: ${intent.status}, fee ${amount(intent.amountFee)}, total ${amount(intent.amountGross)} USDT`,
    );

    console.log(`\nWithdrawal ${intent.restId}, live over ${transport} (up to ${watchSeconds} s):`);
    let last = intent.status;
    const watch = app.watchWithdrawal(intent.id, (update) => {
      last = update.status;
      console.log(`  ${update.updatedAt}  ${update.status}`);
    });
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      watch.done.then(() => 'final' as const),
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), watchSeconds * 1000);
      }),
    ]);
    clearTimeout(timer);
    watch.stop();
    if (outcome === 'final') console.log(`  final status: ${last}`);
    else
      console.log(
        `  no final status within ${watchSeconds} s (still ${last}); stopped watching. The withdrawal goes on: watch it in GraphiQL's WatchWithdrawal tab.`,
      );
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    console.error(`\nFailed: ${(error as Error).message}`);
    if (/fetch failed|ECONNREFUSED/.test(`${error} ${cause}`))
      console.error(`Is the gateway running at ${gatewayURL}? Start it with \`npm start\`.`);
    process.exitCode = 1;
  } finally {
    await app.close();
  }
}
