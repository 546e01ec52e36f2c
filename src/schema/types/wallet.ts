import { brandWithType } from '@pothos/core';
import { badUserInput } from '../../errors/errors.ts';
import type { WalletAssetDTO, WalletDTO } from '../../upstream/types.ts';
import { builder } from '../builder.ts';
import { connectionType, resolvePagedConnection } from '../connections.ts';
import { WalletStatus } from '../enums.ts';
import { loadById, type NodeTypename } from '../global-ids.ts';
import { INPUT_LIMITS } from '../input-limits.ts';
import { selectsUndeferred } from '../lookahead.ts';
import { restLoad } from '../rest-loads.ts';

const BlockchainDetail = builder
  .objectRef<WalletDTO['networkEndpoint']['blockchainDetail']>('WalletBlockchainDetail')
  .implement({
    description: 'Network details of a wallet (REST `networkEndpoint.blockchainDetail`).',
    fields: (t) => ({
      chainId: t.exposeString('chainId', {
        description: 'The network, a numeric-looking id (REST `chainId`).',
      }),
      address: t.exposeString('address', { description: 'The wallet address; the same as `identifier`.' }),
    }),
  });

const NetworkEndpoint = builder.objectRef<WalletDTO['networkEndpoint']>('NetworkEndpoint').implement({
  description: 'Where a wallet lives on its network (REST `networkEndpoint`).',
  fields: (t) => ({
    type: t.exposeString('type', { description: 'blockchain' }),
    provider: t.exposeString('provider', { description: 'tron' }),
    identifier: t.exposeString('identifier', { description: 'The wallet address on the network.' }),
    blockchainDetail: t.expose('blockchainDetail', {
      type: BlockchainDetail,
      description: 'Chain id and address.',
    }),
  }),
});

const AssetBalance = builder.objectRef<WalletAssetDTO['balance']>('AssetBalance').implement({
  description: 'Amounts of one currency in a wallet, exact decimals (REST `balance`).',
  fields: (t) => ({
    availableAmount: t.expose('availableAmount', { type: 'Decimal', description: 'Spendable now.' }),
    lockedAmount: t.expose('lockedAmount', {
      type: 'Decimal',
      description: 'Held by withdrawal intents in progress.',
    }),
  }),
});

const WalletAsset = builder.objectRef<WalletAssetDTO>('WalletAsset').implement({
  description: 'The balance of one currency held in a wallet.',
  fields: (t) => ({
    currencyCode: t.exposeString('currencyCode', { description: 'The currency, e.g. USDT or TRX.' }),
    nickname: t.exposeString('nickname', { description: 'Display label of the asset (REST `nickname`).' }),
    balance: t.expose('balance', { type: AssetBalance, description: 'Available and locked amounts.' }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When the asset was added to the wallet.',
    }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When the asset last changed.' }),
  }),
});

export const Wallet = builder.objectRef<WalletDTO>('Wallet');

builder.node(Wallet, {
  // Replaced once built by a synchronous encoder of the same global id (schema/index.ts).
  id: { resolve: (wallet) => wallet.id },
  loadMany: (ids, ctx) =>
    Promise.all(ids.map(async (id) => loadedNode(await ctx.loaders.wallet.load(id), 'Wallet'))),
  description: 'A merchant wallet on the Tron network, with one asset per currency held.',
  fields: (t) => ({
    restId: t.exposeString('id', { description: 'The REST API identifier of this wallet.' }),
    status: t.field({
      type: WalletStatus.ref,
      description: 'The wallet status; UNKNOWN for a value this schema does not know yet (see rawStatus).',
      resolve: (w) => WalletStatus.fromRaw(w.status),
    }),
    rawStatus: t.exposeString('status', { description: 'The status exactly as the REST API sent it.' }),
    address: t.string({
      description: 'Shortcut for networkEndpoint.identifier: the Tron address to deposit to.',
      resolve: (w) => w.networkEndpoint.identifier,
    }),
    networkEndpoint: t.expose('networkEndpoint', {
      type: NetworkEndpoint,
      description: 'The network and address (REST `networkEndpoint`).',
    }),
    assets: t.expose('assets', {
      type: [WalletAsset],
      description:
        'One entry per currency held, with its balance; read from the same REST answer as the wallet.',
    }),
    asset: t.field({
      type: WalletAsset,
      nullable: true,
      description: 'The asset of one currency, or null when the wallet holds none of it.',
      args: {
        currencyCode: t.arg.string({
          required: true,
          description: `The currency, e.g. USDT; any letter case; at most ${INPUT_LIMITS.currencyCode} characters.`,
        }),
      },
      resolve: (w, { currencyCode }) => {
        if (currencyCode.length > INPUT_LIMITS.currencyCode) {
          throw badUserInput(
            `currencyCode must be at most ${INPUT_LIMITS.currencyCode} characters; received ${currencyCode.length}`,
            ['currencyCode'],
          );
        }
        return w.assets.find((a) => a.currencyCode.toUpperCase() === currencyCode.toUpperCase()) ?? null;
      },
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the wallet was created.' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When the wallet last changed.' }),
  }),
});

export const WalletConnection = connectionType(Wallet, 'Wallet');

/**
 * What a node type's `loadMany` hands the relay plugin: a copy of the loader's DTO (DataLoader shares
 * its DTOs), branded here, since the plugin brands only once a whole batch settled and hands an id
 * asked twice (`a: node(id: $x) … b: node(id: $x)`) its entry's promise before that.
 */
export function loadedNode<T extends object>(value: T | null, typename: NodeTypename): T | null {
  if (!value) return null;
  const copy = { ...value };
  // The brand is the type's name (what Node's resolveType reads); Pothos types it as a ref.
  brandWithType(copy, typename as never);
  return copy;
}

builder.queryFields((t) => ({
  wallet: t.field({
    type: Wallet,
    nullable: true,
    description: 'A wallet by its global id or its REST id; null when it does not exist for this merchant.',
    args: { id: t.arg.id({ required: true, description: 'A Wallet global id, or a REST wallet id.' }) },
    extensions: restLoad({ route: 'GET /wallets/{id}', batched: 'GET /wallets', loads: 'byId', calls: 1 }),
    resolve: (_root, { id }, ctx, info) => {
      const wallet = loadById((restId) => ctx.loaders.wallet.load(restId), String(id), 'Wallet');
      // The selected lists' first read (the merchant's newest page, the index catch-up) needs no
      // wallet id: started beside the wallet's, one round of calls, not two (wasted when the wallet
      // does not exist). Not under @defer: those must not take the budget of what is sent first.
      for (const list of ['deposits', 'withdrawalIntents'] as const) {
        if (selectsUndeferred(info, list))
          ctx.loaders
            .walletList(list)
            .index()
            .catch(() => {});
      }
      return wallet;
    },
  }),
  wallets: t.connection(
    {
      type: Wallet,
      nullable: true,
      description:
        "The merchant's wallets, newest first. Null only when its REST call failed; the error names this path and sibling fields keep their data.",
      extensions: restLoad({ route: 'GET /wallets', loads: 'page', calls: 1 }),
      resolve: (_root, args, ctx) =>
        resolvePagedConnection('wallets', args, (request) => ctx.loaders.walletsPage(request)),
    },
    WalletConnection,
  ),
}));
