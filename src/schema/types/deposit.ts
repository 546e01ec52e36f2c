import { depositsUpdated } from '../../subscriptions/deposit-feeds.ts';
import { AFTER_DESCRIPTION, liveValue, resumeFrom } from '../../subscriptions/feed.ts';
import type { DepositDTO } from '../../upstream/types.ts';
import { builder } from '../builder.ts';
import { connectionType, resolvePagedConnection } from '../connections.ts';
import { DepositStatus, statusFilter } from '../enums.ts';
import { loadById } from '../global-ids.ts';
import { wantsItemWallets } from '../lookahead.ts';
import { restLoad } from '../rest-loads.ts';
import { resolveWalletConnection } from '../wallet-connections.ts';
import { Transaction } from './transaction.ts';
import { loadedNode, Wallet } from './wallet.ts';

export const Deposit = builder.objectRef<DepositDTO>('Deposit');

const DepositSource = builder.objectRef<DepositDTO['source']>('DepositSource').implement({
  description: 'Where a deposit came from (REST `source`).',
  fields: (t) => ({
    type: t.exposeString('type', { description: 'crypto' }),
    rail: t.exposeString('rail', { description: 'tron' }),
    identifier: t.exposeString('identifier', { description: "The sender's address." }),
  }),
});

builder.node(Deposit, {
  description: 'Funds received into a merchant wallet.',
  // Replaced once built by a synchronous encoder of the same global id (schema/index.ts).
  id: { resolve: (deposit) => deposit.id },
  loadMany: (ids, ctx) =>
    Promise.all(ids.map(async (id) => loadedNode(await ctx.loaders.deposit.load(id), 'Deposit'))),
  fields: (t) => ({
    restId: t.exposeString('id', { description: 'The REST API identifier of this deposit.' }),
    wallet: t.field({
      type: Wallet,
      nullable: true,
      description: 'The receiving wallet.',
      extensions: restLoad({ route: 'GET /wallets/{id}', batched: 'GET /wallets', loads: 'batch', calls: 1 }),
      resolve: (d, _args, ctx) => ctx.loaders.wallet.load(d.wallet.id),
    }),
    walletRestId: t.string({ description: "The receiving wallet's REST id.", resolve: (d) => d.wallet.id }),
    transaction: t.expose('transaction', {
      type: Transaction,
      description: 'The on-chain transaction that brought it.',
    }),
    source: t.expose('source', { type: DepositSource, description: "The sender's network and address." }),
    status: t.field({
      type: DepositStatus.ref,
      description: 'The deposit status; UNKNOWN for a value this schema does not know yet (see rawStatus).',
      resolve: (d) => DepositStatus.fromRaw(d.status),
    }),
    rawStatus: t.exposeString('status', { description: 'The status exactly as the REST API sent it.' }),
    currencyCode: t.exposeString('currencyCode', { description: 'The currency deposited, e.g. USDT.' }),
    amount: t.expose('amount', { type: 'Decimal', description: 'Deposited amount.' }),
    amountFee: t.expose('amountFee', { type: 'Decimal', description: 'Fee taken.' }),
    amountNet: t.expose('amountNet', { type: 'Decimal', description: 'Amount after the fee.' }),
    finalizedAt: t.expose('finalizedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the deposit reached a final status; null before that.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the deposit was first seen.' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When the deposit last changed.' }),
  }),
});

export const DepositConnection = connectionType(Deposit, 'Deposit');

builder.queryFields((t) => ({
  deposit: t.field({
    type: Deposit,
    nullable: true,
    description: 'A deposit by its global id or its REST id; null when it does not exist for this merchant.',
    args: { id: t.arg.id({ required: true, description: 'A Deposit global id, or a REST deposit id.' }) },
    extensions: restLoad({ route: 'GET /deposits/{id}', loads: 'byId', calls: 1 }),
    resolve: (_root, { id }, ctx) =>
      loadById((restId) => ctx.loaders.deposit.load(restId), String(id), 'Deposit'),
  }),
  deposits: t.connection(
    {
      type: Deposit,
      nullable: true,
      description:
        "The merchant's deposits, newest first. Null only when its REST call failed; the error names this path and sibling fields keep their data.",
      extensions: restLoad({ route: 'GET /deposits', loads: 'page', calls: 1 }),
      args: {
        status: t.arg({ type: [DepositStatus.ref], required: false, description: 'Any of these statuses.' }),
      },
      resolve: (_root, args, ctx, info) => {
        const statusIn = statusFilter(args.status);
        if (wantsItemWallets(args, info)) ctx.loaders.prefetchWallets();
        return resolvePagedConnection(`deposits|${statusIn ?? ''}`, args, (request) =>
          ctx.loaders.depositsPage({ ...request, statusIn }),
        );
      },
    },
    DepositConnection,
  ),
}));

builder.objectField(Wallet, 'deposits', (t) =>
  t.connection(
    {
      type: Deposit,
      nullable: true,
      description:
        "This wallet's deposits, newest first, read out of the merchant's deposits (the REST API has no wallet filter) where its wallet index says they lie. Cursors keep their place as deposits arrive. Null only when its REST call failed; the error names this path and sibling fields keep their data.",
      extensions: restLoad({ route: 'GET /deposits', loads: 'scan', calls: 1 }),
      args: {
        status: t.arg({ type: [DepositStatus.ref], required: false, description: 'Any of these statuses.' }),
      },
      resolve: (wallet, args, ctx) => {
        const statusIn = statusFilter(args.status);
        return resolveWalletConnection(
          `wallet:${wallet.id}:deposits|${statusIn ?? ''}`,
          args,
          ctx.loaders.walletList('deposits'),
          wallet.id,
          statusIn && {
            matches: (item) => statusIn.includes(item.status),
            counted: ctx.loaders.walletList('deposits', statusIn),
          },
        );
      },
    },
    DepositConnection,
  ),
);

// --- Live deposits (subscriptions/live.ts polls the REST API for these) -------------------------

builder.subscriptionField('depositsUpdated', (t) =>
  t.field({
    type: Deposit,
    description:
      'Each of the merchant\'s deposits that appears or changes status after subscribing, once per status: for a checkout waiting for "payment received" (`walletId`, `status: [COMPLETED]`) or a live list. Nothing is sent at first; news comes within a poll of the REST API. Ends only with UNAUTHENTICATED or FORBIDDEN.',
    extensions: restLoad({ route: 'GET /deposits', loads: 'poll', calls: 0 }),
    args: {
      walletId: t.arg.id({
        required: false,
        description:
          "Only deposits into this wallet: a Wallet global id or a REST wallet id. Another merchant's wallet is NOT_FOUND, as an unknown one is.",
      }),
      status: t.arg({
        type: [DepositStatus.ref],
        required: false,
        description:
          'Only deposits that now have one of these statuses, e.g. [COMPLETED] for "payment received" or [COMPLETED, FAILED] for any outcome.',
      }),
      after: t.arg.string({
        required: false,
        description: AFTER_DESCRIPTION,
      }),
    },
    subscribe: (_root, args, ctx) =>
      ctx.live.watch(
        ctx.caller,
        depositsUpdated({
          walletId: args.walletId == null ? undefined : String(args.walletId),
          statuses: statusFilter(args.status),
        }),
        resumeFrom(args.after, ctx),
      ),
    resolve: liveValue,
  }),
);
