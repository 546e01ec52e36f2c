import { formatAmount, formatLegAmount } from './money.ts';
import {
  type ApiKeyRecord,
  type ChainTransaction,
  DEPOSIT_CHAIN_ID,
  type DepositRecord,
  type Merchant,
  type WalletRecord,
  WITHDRAWAL_CHAIN_ID,
  type WithdrawalRecord,
} from './store/records.ts';

/**
 * Store records rendered exactly as the spec's resources (names, nesting, decimal strings), and the
 * admin API's merchants and keys (never a key's value or hash).
 */

export function presentWallet(wallet: WalletRecord) {
  return {
    id: wallet.id,
    status: wallet.status,
    networkEndpoint: {
      type: 'blockchain',
      provider: 'tron',
      identifier: wallet.address,
      blockchainDetail: { chainId: DEPOSIT_CHAIN_ID, address: wallet.address },
    },
    createdAt: wallet.createdAt,
    updatedAt: wallet.updatedAt,
    assets: [...wallet.assets.values()].map((asset) => ({
      currencyCode: asset.currencyCode,
      nickname: asset.nickname,
      balance: {
        availableAmount: formatAmount(asset.available),
        lockedAmount: formatAmount(asset.locked),
      },
      createdAt: asset.createdAt,
      updatedAt: asset.updatedAt,
    })),
  };
}

function presentTransaction(tx: ChainTransaction, chainId: string, currencyCode: string, principal: string) {
  return {
    type: 'blockchain',
    provider: 'tron',
    blockchain: { chainId, hash: tx.hash, fromAddress: tx.fromAddress, toAddress: tx.toAddress },
    legs: [
      { type: 'principal', currencyCode, amount: principal },
      { type: 'network_fee', currencyCode: 'TRX', amount: formatLegAmount(tx.networkFee) },
    ],
  };
}

export function presentDeposit(deposit: DepositRecord) {
  return {
    id: deposit.id,
    wallet: { id: deposit.walletId, type: 'merchant_wallet' },
    transaction: presentTransaction(
      deposit.transaction,
      DEPOSIT_CHAIN_ID,
      deposit.currencyCode,
      formatLegAmount(deposit.amount),
    ),
    source: { type: 'crypto', rail: 'tron', identifier: deposit.transaction.fromAddress },
    status: deposit.status,
    currencyCode: deposit.currencyCode,
    amount: formatAmount(deposit.amount),
    amountFee: formatAmount(deposit.amountFee),
    amountNet: formatAmount(deposit.amountNet),
    finalizedAt: deposit.finalizedAt,
    createdAt: deposit.createdAt,
    updatedAt: deposit.updatedAt,
  };
}

export function presentWithdrawal(intent: WithdrawalRecord) {
  return {
    id: intent.id,
    wallet: { id: intent.walletId, type: 'merchant_wallet' },
    transaction:
      intent.transaction &&
      presentTransaction(
        intent.transaction,
        WITHDRAWAL_CHAIN_ID,
        intent.currencyCode,
        formatLegAmount(intent.amountNet),
      ),
    destination: {
      type: 'crypto',
      rail: 'tron',
      routingCode: WITHDRAWAL_CHAIN_ID,
      identifier: intent.destinationAddress,
    },
    status: intent.status,
    serviceFeeMode: intent.serviceFeeMode,
    amount: formatAmount(intent.amount),
    amountFee: formatAmount(intent.amountFee),
    amountNet: formatAmount(intent.amountNet),
    amountGross: formatAmount(intent.amountGross),
    submittedAt: intent.submittedAt,
    finalizedAt: intent.finalizedAt,
    createdAt: intent.createdAt,
    updatedAt: intent.updatedAt,
  };
}

export function presentMerchant(merchant: Merchant) {
  const config = merchant.withdrawalConfig;
  return {
    id: merchant.id,
    name: merchant.name,
    withdrawalConfig: config && {
      fee: formatAmount(config.fee),
      dailyLimit: formatAmount(config.dailyLimit),
      monthlyLimit: formatAmount(config.monthlyLimit),
    },
    createdAt: merchant.createdAt,
  };
}

export function presentKey(record: ApiKeyRecord) {
  return {
    id: record.id,
    merchantId: record.merchantId,
    name: record.name,
    access: record.access,
    revokedAt: record.revokedAt,
    createdAt: record.createdAt,
  };
}
