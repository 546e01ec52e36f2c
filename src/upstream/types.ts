/**
 * The Merchant Wallet REST API's resources, exactly as the spec names them. GraphQL types are
 * backed by these DTOs; there is no second model. Amounts are decimal strings, never numbers.
 */

export type Timestamp = string;
export type DecimalString = string;

export interface PagingDTO {
  size: number;
  page: number;
  count: number;
  limit: number;
  totalCount: number;
  totalPages: number;
}

export interface WalletAssetDTO {
  currencyCode: string;
  nickname: string;
  balance: { availableAmount: DecimalString; lockedAmount: DecimalString };
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface NetworkEndpointDTO {
  type: string;
  provider: string;
  identifier: string;
  blockchainDetail: { chainId: string; address: string };
}

export interface WalletDTO {
  id: string;
  status: string;
  networkEndpoint: NetworkEndpointDTO;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  assets: WalletAssetDTO[];
}

export interface WalletReferenceDTO {
  id: string;
  type: string;
}

export interface TransactionLegDTO {
  type: string;
  currencyCode: string;
  amount: DecimalString;
}

export interface TransactionDTO {
  type: string;
  provider: string;
  blockchain: { chainId: string; hash: string; fromAddress: string; toAddress: string };
  legs: TransactionLegDTO[];
}

export interface DepositDTO {
  id: string;
  wallet: WalletReferenceDTO;
  transaction: TransactionDTO;
  source: { type: string; rail: string; identifier: string };
  status: string;
  currencyCode: string;
  amount: DecimalString;
  amountFee: DecimalString;
  amountNet: DecimalString;
  finalizedAt: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface WithdrawalIntentDTO {
  id: string;
  wallet: WalletReferenceDTO;
  transaction: TransactionDTO | null;
  destination: { type: string; rail: string; routingCode: string; identifier: string };
  status: string;
  serviceFeeMode: string;
  amount: DecimalString;
  amountFee: DecimalString;
  amountNet: DecimalString;
  amountGross: DecimalString;
  submittedAt: Timestamp;
  finalizedAt: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface CreateWithdrawalIntentBody {
  senderWalletId: string;
  serviceFeeMode: string;
  currencyCode: string;
  amount: DecimalString;
  destination: { type: string; rail: string; identifier: string };
}

export interface Page<T> {
  items: T[];
  paging: PagingDTO;
}

export interface ListParams {
  page: number;
  size: number;
  statusIn?: readonly string[];
}
