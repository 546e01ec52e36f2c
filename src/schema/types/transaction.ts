import type { TransactionDTO, TransactionLegDTO } from '../../upstream/types.ts';
import { builder } from '../builder.ts';
import { TransactionLegType } from '../enums.ts';

/** The on-chain transaction of a deposit or a withdrawal intent, as the REST API reports it. */

const BlockchainDetail = builder.objectRef<TransactionDTO['blockchain']>('TransactionBlockchain').implement({
  fields: (t) => ({
    chainId: t.exposeString('chainId', {
      description: 'Numeric-looking on deposits (e.g. "728126428"), <network>:<subnetwork> on withdrawals.',
    }),
    hash: t.exposeString('hash'),
    fromAddress: t.exposeString('fromAddress'),
    toAddress: t.exposeString('toAddress'),
  }),
});

const TransactionLeg = builder.objectRef<TransactionLegDTO>('TransactionLeg').implement({
  fields: (t) => ({
    type: t.field({ type: TransactionLegType.ref, resolve: (leg) => TransactionLegType.fromRaw(leg.type) }),
    rawType: t.exposeString('type', { description: 'The leg type exactly as the REST API sent it.' }),
    currencyCode: t.exposeString('currencyCode'),
    amount: t.expose('amount', { type: 'Decimal', description: '18 fractional digits.' }),
  }),
});

export const Transaction = builder.objectRef<TransactionDTO>('Transaction').implement({
  fields: (t) => ({
    type: t.exposeString('type', { description: 'blockchain' }),
    provider: t.exposeString('provider', { description: 'tron' }),
    blockchain: t.expose('blockchain', { type: BlockchainDetail }),
    legs: t.expose('legs', { type: [TransactionLeg] }),
    hash: t.string({ description: 'Shortcut for blockchain.hash.', resolve: (tx) => tx.blockchain.hash }),
  }),
});
