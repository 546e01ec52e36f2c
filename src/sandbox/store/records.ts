import { Money } from '../money.ts';

/**
 * The sandbox's records: what it keeps for merchants, keys, wallets, deposits and withdrawal
 * intents, and the status lifecycles. Shapes of storage, not of the REST API (present.ts renders
 * the spec's resources from these).
 */

/**
 * Statuses the REST API is known to emit. Kept apart from the gateway's enums on purpose: the
 * sandbox is the independent check on the gateway, so neither list is derived from the other.
 */
export const DEPOSIT_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;
export const WITHDRAWAL_STATUSES = [
  'preparing',
  'reviewing',
  'pending',
  'completed',
  'failed',
  'cancelled',
] as const;
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number];
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];
export type ServiceFeeMode = 'inclusive' | 'exclusive';
export type KeyAccess = 'read_write' | 'read_only';

/** Tron mainnet's numeric chain id, as deposits report it. */
export const DEPOSIT_CHAIN_ID = '728126428';
/** The `<network>:<subnetwork>` form withdrawal intents report. */
export const WITHDRAWAL_CHAIN_ID = 'tron:mainnet';
/** The informational network fee, in TRX, recorded on transactions the sandbox makes. */
export const NETWORK_FEE_TRX = new Money('1.1');

/** Statuses whose intents hold their gross amount locked in the wallet. */
export const OPEN_WITHDRAWAL: ReadonlySet<WithdrawalStatus> = new Set(['preparing', 'reviewing', 'pending']);

export interface WithdrawalConfig {
  /** Flat service fee in USDT. */
  fee: Money;
  dailyLimit: Money;
  monthlyLimit: Money;
}

export interface Merchant {
  id: string;
  name: string;
  withdrawalConfig: WithdrawalConfig | null;
  createdAt: string;
}

export interface ApiKeyRecord {
  id: string;
  merchantId: string;
  name: string;
  access: KeyAccess;
  revokedAt: string | null;
  createdAt: string;
}

export interface AssetRecord {
  currencyCode: string;
  nickname: string;
  available: Money;
  locked: Money;
  createdAt: string;
  updatedAt: string;
}

export interface WalletRecord {
  id: string;
  merchantId: string;
  status: 'active';
  address: string;
  assets: Map<string, AssetRecord>;
  createdAt: string;
  updatedAt: string;
}

export interface ChainTransaction {
  hash: string;
  fromAddress: string;
  toAddress: string;
  networkFee: Money;
}

export interface DepositRecord {
  id: string;
  merchantId: string;
  walletId: string;
  status: DepositStatus;
  currencyCode: string;
  amount: Money;
  amountFee: Money;
  amountNet: Money;
  transaction: ChainTransaction;
  finalizedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface WithdrawalRecord {
  id: string;
  merchantId: string;
  walletId: string;
  status: WithdrawalStatus;
  serviceFeeMode: ServiceFeeMode;
  currencyCode: string;
  destinationAddress: string;
  amount: Money;
  amountFee: Money;
  amountNet: Money;
  amountGross: Money;
  transaction: ChainTransaction | null;
  submittedAt: string;
  finalizedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface CreateWithdrawalInput {
  senderWalletId: string;
  serviceFeeMode: ServiceFeeMode;
  currencyCode: 'USDT';
  amount: Money;
  destination: { type: 'crypto'; rail: 'tron'; identifier: string };
}
