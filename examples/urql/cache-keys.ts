import type { KeyingConfig } from '@urql/exchange-graphcache';

/**
 * graphcache normalises an object by `id` (or `_id`). Every object type of the schema without one
 * is listed here: it has no identity of its own, so it stays embedded in the object or list that
 * holds it (a key of `null`). Without an entry graphcache warns at runtime (and embeds it anyway).
 * test/unit/urql-cache-keys.test.ts fails when the schema gains an id-less type that is not here.
 */
const embedded = () => null;

export const keys: KeyingConfig = {
  // A connection, its edges and page info belong to the field (and arguments) that returned them.
  WalletConnection: embedded,
  WalletEdge: embedded,
  DepositConnection: embedded,
  DepositEdge: embedded,
  WithdrawalIntentConnection: embedded,
  WithdrawalIntentEdge: embedded,
  PageInfo: embedded,
  // Parts of a wallet, deposit or withdrawal intent, read through it.
  WalletAsset: embedded,
  AssetBalance: embedded,
  NetworkEndpoint: embedded,
  WalletBlockchainDetail: embedded,
  DepositSource: embedded,
  WithdrawalDestination: embedded,
  Transaction: embedded,
  TransactionBlockchain: embedded,
  TransactionLeg: embedded,
  // createWithdrawalIntent's answers: the created intent (normalised by its id inside) or a failure.
  CreateWithdrawalIntentSuccess: embedded,
  BalanceInsufficientError: embedded,
  DailyLimitExceededError: embedded,
  DataInvalidError: embedded,
  DestinationInternalError: embedded,
  DestinationInvalidError: embedded,
  IdempotencyKeyReusedError: embedded,
  MonthlyLimitExceededError: embedded,
  ServiceFeeNotCoveredError: embedded,
  WithdrawalConfigIncompleteError: embedded,
  WithdrawalRefusedError: embedded,
};
