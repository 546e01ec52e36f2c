import type { TransactionDTO, TransactionLegDTO } from '../../upstream/types.ts';
import { builder } from '../builder.ts';
import { TransactionLegType } from '../enums.ts';

/** The on-chain transaction of a deposit or a withdrawal intent, as the REST API reports it. */

const BlockchainDetail = builder.objectRef<TransactionDTO['blockchain']>('TransactionBlockchain').implement({
  description: 'Where a transaction happened and between which addresses (REST `blockchain`).',
  fields: (t) => ({
    chainId: t.exposeString('chainId', {
      description: 'Numeric-looking on deposits (e.g. "728126428"), <network>:<subnetwork> on withdrawals.',
    }),
    hash: t.exposeString('hash', { description: 'The transaction hash on the network.' }),
    fromAddress: t.exposeString('fromAddress', { description: 'The sending address.' }),
    toAddress: t.exposeString('toAddress', { description: 'The receiving address.' }),
  }),
});

const TransactionLeg = builder.objectRef<TransactionLegDTO>('TransactionLeg').implement({
  description: 'One amount a transaction moved: the principal, or the network fee (REST `legs[]`).',
  fields: (t) => ({
    type: t.field({
      type: TransactionLegType.ref,
      description: 'What this leg moves; UNKNOWN for a value this schema does not know yet (see rawType).',
      resolve: (leg) => TransactionLegType.fromRaw(leg.type),
    }),
    rawType: t.exposeString('type', { description: 'The leg type exactly as the REST API sent it.' }),
    currencyCode: t.exposeString('currencyCode', {
      description: 'The currency of this leg, e.g. USDT or TRX.',
    }),
    amount: t.expose('amount', { type: 'Decimal', description: '18 fractional digits.' }),
  }),
});

export const Transaction = builder.objectRef<TransactionDTO>('Transaction').implement({
  description: 'The on-chain transaction of a deposit or a withdrawal intent (REST `transaction`).',
  fields: (t) => ({
    type: t.exposeString('type', { description: 'blockchain' }),
    provider: t.exposeString('provider', { description: 'tron' }),
    blockchain: t.expose('blockchain', {
      type: BlockchainDetail,
      description: 'Network, hash and addresses.',
    }),
    legs: t.expose('legs', {
      type: [TransactionLeg],
      description: 'The amounts moved: principal and network fee.',
    }),
    hash: t.string({ description: 'Shortcut for blockchain.hash.', resolve: (tx) => tx.blockchain.hash }),
  }),
});
