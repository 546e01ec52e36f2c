/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
/** A withdrawal of USDT from one of your wallets to a Tron address (REST POST /withdrawal-intents). */
export type CreateWithdrawalIntentInput = {
  /** Positive, at most 2 decimal places. */
  amount: string;
  /** Only USDT. */
  currencyCode: string;
  /** The recipient. */
  destination: WithdrawalDestinationInput;
  /** Makes retries safe: the same key with the same input returns the first result (for 24 h, per API key) instead of creating a second intent. A refusal of the API key (401, 403) keeps nothing. 1-255 printable ASCII characters. */
  idempotencyKey?: string | null | undefined;
  /** INCLUSIVE: the fee comes out of amount. EXCLUSIVE: it is charged on top. */
  serviceFeeMode: ServiceFeeMode;
  /** The sender wallet: its global id or its REST id. */
  walletId: string | number;
};

/** Status of a deposit (REST `status`). COMPLETED and FAILED are final. */
export type DepositStatus =
  /** Credited to the wallet; final (REST `completed`). */
  | 'COMPLETED'
  /** Not credited; final (REST `failed`). */
  | 'FAILED'
  /** Seen, not yet processed (REST `pending`). */
  | 'PENDING'
  /** Being confirmed (REST `processing`). */
  | 'PROCESSING'
  /** A value this schema does not know yet; see the raw field. */
  | 'UNKNOWN';

/** How the service fee is charged (REST `serviceFeeMode`). */
export type ServiceFeeMode =
  /** The fee is charged on top: net = amount, gross = amount + fee (REST `exclusive`). */
  | 'EXCLUSIVE'
  /** The fee is deducted from the amount: net = amount - fee, gross = amount (REST `inclusive`). */
  | 'INCLUSIVE'
  /** A value this schema does not know yet; see the raw field. */
  | 'UNKNOWN';

/** Status of a wallet (REST `status`). */
export type WalletStatus =
  /** The wallet can receive deposits and send withdrawals (REST `active`). */
  | 'ACTIVE'
  /** A value this schema does not know yet; see the raw field. */
  | 'UNKNOWN';

/** Where the withdrawal goes (REST `destination`). */
export type WithdrawalDestinationInput = {
  /** The recipient Tron address (34 characters). */
  identifier: string;
  /** Only tron. */
  rail: string;
  /** Only crypto. */
  type: string;
};

/** Status of a withdrawal intent (REST `status`). COMPLETED, FAILED and CANCELLED are final; until then the gross amount is locked in the wallet. */
export type WithdrawalIntentStatus =
  /** Withdrawn before sending; the locked amount is released; final (REST `cancelled`). */
  | 'CANCELLED'
  /** Sent: the transaction and finalizedAt are set; final (REST `completed`). */
  | 'COMPLETED'
  /** Not sent; the locked amount is released; final (REST `failed`). */
  | 'FAILED'
  /** Approved and being sent on-chain (REST `pending`). */
  | 'PENDING'
  /** Just created; no on-chain transaction yet (REST `preparing`). */
  | 'PREPARING'
  /** Under review by the platform (REST `reviewing`). */
  | 'REVIEWING'
  /** A value this schema does not know yet; see the raw field. */
  | 'UNKNOWN';

export type ActivityFeedQueryVariables = Exact<{
  first?: number | null | undefined;
  after?: string | null | undefined;
  status?: Array<DepositStatus> | DepositStatus | null | undefined;
}>;


export type ActivityFeedQuery = { deposits: { totalCount: number | null, pageInfo: { hasNextPage: boolean, endCursor: string | null }, edges: Array<{ cursor: string, node: { id: string, status: DepositStatus, currencyCode: string, amount: string, amountNet: string, createdAt: string, wallet: { id: string, address: string } | null } }> } | null };

export type CreateWithdrawalMutationVariables = Exact<{
  input: CreateWithdrawalIntentInput;
}>;


export type CreateWithdrawalMutation = { createWithdrawalIntent:
    | { __typename: 'BalanceInsufficientError', code: string, message: string }
    | { __typename: 'CreateWithdrawalIntentSuccess', withdrawalIntent: { id: string, restId: string, status: WithdrawalIntentStatus, serviceFeeMode: ServiceFeeMode, amount: string, amountFee: string, amountNet: string, amountGross: string, finalizedAt: string | null, transaction: { hash: string } | null } }
    | { __typename: 'DailyLimitExceededError', code: string, message: string }
    | { __typename: 'DataInvalidError', code: string, message: string, field: Array<string> | null }
    | { __typename: 'DestinationInternalError', code: string, message: string }
    | { __typename: 'DestinationInvalidError', code: string, message: string }
    | { __typename: 'IdempotencyKeyReusedError', code: string, message: string }
    | { __typename: 'MonthlyLimitExceededError', code: string, message: string }
    | { __typename: 'ServiceFeeNotCoveredError', code: string, message: string }
    | { __typename: 'WithdrawalConfigIncompleteError', code: string, message: string }
    | { __typename: 'WithdrawalRefusedError', code: string, message: string }
   };

export type DashboardQueryVariables = Exact<{
  first?: number | null | undefined;
}>;


export type DashboardQuery = { wallets: { totalCount: number | null, nodes: Array<{ id: string, restId: string, address: string, status: WalletStatus, assets: Array<{ currencyCode: string, balance: { availableAmount: string, lockedAmount: string } }> }> } | null };

export type LiveDepositsSubscriptionVariables = Exact<{
  walletId?: string | number | null | undefined;
  status?: Array<DepositStatus> | DepositStatus | null | undefined;
}>;


export type LiveDepositsSubscription = { depositsUpdated: { id: string, status: DepositStatus, amount: string, amountNet: string, currencyCode: string, walletRestId: string, updatedAt: string, transaction: { hash: string } } };

export type LiveWithdrawalsSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type LiveWithdrawalsSubscription = { withdrawalIntentsUpdated: { id: string, status: WithdrawalIntentStatus, amount: string, updatedAt: string } };

export type NodeByIdQueryVariables = Exact<{
  id: string | number;
}>;


export type NodeByIdQuery = { node:
    | { __typename: 'Deposit', amount: string, id: string, depositStatus: DepositStatus }
    | { __typename: 'Wallet', address: string, id: string }
    | { __typename: 'WithdrawalIntent', amount: string, id: string, withdrawalStatus: WithdrawalIntentStatus }
   | null };

export type WalletScreenDeferredQueryVariables = Exact<{
  id: string | number;
}>;


export type WalletScreenDeferredQuery = { wallet: { id: string, address: string, assets: Array<{ currencyCode: string, balance: { availableAmount: string, lockedAmount: string } }> } & ({ deposits: { nodes: Array<{ id: string, status: DepositStatus, amount: string, createdAt: string }> } | null } | { deposits?: never }) & ({ withdrawalIntents: { nodes: Array<{ id: string, status: WithdrawalIntentStatus, amount: string, createdAt: string }> } | null } | { withdrawalIntents?: never }) | null };

export type WalletScreenQueryVariables = Exact<{
  id: string | number;
}>;


export type WalletScreenQuery = { wallet: { id: string, restId: string, address: string, assets: Array<{ currencyCode: string, nickname: string, balance: { availableAmount: string, lockedAmount: string } }>, deposits: { nodes: Array<{ id: string, status: DepositStatus, amount: string, currencyCode: string, createdAt: string }> } | null, withdrawalIntents: { nodes: Array<{ id: string, status: WithdrawalIntentStatus, amount: string, amountGross: string, createdAt: string, destination: { identifier: string } }> } | null } | null };

export type WatchWithdrawalSubscriptionVariables = Exact<{
  intentId: string | number;
}>;


export type WatchWithdrawalSubscription = { withdrawalIntentUpdated: { id: string, status: WithdrawalIntentStatus, amountGross: string, updatedAt: string, finalizedAt: string | null, transaction: { hash: string } | null } };


export const ActivityFeedDocument = {"__meta__":{"hash":"sha256:1a62b701bc0feca1765f3e18a68fe5ccb93a75af736702045ccdfcfcf23a4f61"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ActivityFeed"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}},"defaultValue":{"kind":"IntValue","value":"50"}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"status"}},"type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"DepositStatus"}}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"deposits"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}},{"kind":"Argument","name":{"kind":"Name","value":"status"},"value":{"kind":"Variable","name":{"kind":"Name","value":"status"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"totalCount"}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}},{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"currencyCode"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"amountNet"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"wallet"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"address"}}]}}]}}]}}]}}]}}]} as unknown as DocumentNode<ActivityFeedQuery, ActivityFeedQueryVariables>;
export const CreateWithdrawalDocument = {"__meta__":{"hash":"sha256:9f4833cc6dc6370b9988995faf56ac18f431d6c3162e58d08162d67fdc696536"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateWithdrawal"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateWithdrawalIntentInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createWithdrawalIntent"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"CreateWithdrawalIntentSuccess"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"withdrawalIntent"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"restId"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"serviceFeeMode"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"amountFee"}},{"kind":"Field","name":{"kind":"Name","value":"amountNet"}},{"kind":"Field","name":{"kind":"Name","value":"amountGross"}},{"kind":"Field","name":{"kind":"Name","value":"transaction"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hash"}}]}},{"kind":"Field","name":{"kind":"Name","value":"finalizedAt"}}]}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"UserError"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"DataInvalidError"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}}]}}]}}]}}]} as unknown as DocumentNode<CreateWithdrawalMutation, CreateWithdrawalMutationVariables>;
export const DashboardDocument = {"__meta__":{"hash":"sha256:d31467f13bacadc87d8743ec023a1b242efb74b1ce28ce49edb1043c418dcf80"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Dashboard"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}},"defaultValue":{"kind":"IntValue","value":"20"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"wallets"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"totalCount"}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"restId"}},{"kind":"Field","name":{"kind":"Name","value":"address"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"assets"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"currencyCode"}},{"kind":"Field","name":{"kind":"Name","value":"balance"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"availableAmount"}},{"kind":"Field","name":{"kind":"Name","value":"lockedAmount"}}]}}]}}]}}]}}]}}]} as unknown as DocumentNode<DashboardQuery, DashboardQueryVariables>;
export const LiveDepositsDocument = {"__meta__":{"hash":"sha256:9583b947a97c983292dee1a1875760a9192aaafa2ef4438883128b8a0f3c96ff"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"LiveDeposits"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"walletId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"status"}},"type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"DepositStatus"}}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"depositsUpdated"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"walletId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"walletId"}}},{"kind":"Argument","name":{"kind":"Name","value":"status"},"value":{"kind":"Variable","name":{"kind":"Name","value":"status"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"amountNet"}},{"kind":"Field","name":{"kind":"Name","value":"currencyCode"}},{"kind":"Field","name":{"kind":"Name","value":"walletRestId"}},{"kind":"Field","name":{"kind":"Name","value":"transaction"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hash"}}]}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}}]}}]} as unknown as DocumentNode<LiveDepositsSubscription, LiveDepositsSubscriptionVariables>;
export const LiveWithdrawalsDocument = {"__meta__":{"hash":"sha256:cfe9a8441ecd9027f704ca8a67768eba8bf3502fc8dd9461c654d3e211d21f64"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"LiveWithdrawals"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"withdrawalIntentsUpdated"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}}]}}]} as unknown as DocumentNode<LiveWithdrawalsSubscription, LiveWithdrawalsSubscriptionVariables>;
export const NodeByIdDocument = {"__meta__":{"hash":"sha256:fc228a1426e48ff517caf6a8f11f485e53ab44c32e220d73c4514d044ec26cd0"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"NodeById"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Wallet"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"address"}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Deposit"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","alias":{"kind":"Name","value":"depositStatus"},"name":{"kind":"Name","value":"status"}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"WithdrawalIntent"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","alias":{"kind":"Name","value":"withdrawalStatus"},"name":{"kind":"Name","value":"status"}}]}}]}}]}}]} as unknown as DocumentNode<NodeByIdQuery, NodeByIdQueryVariables>;
export const WalletScreenDeferredDocument = {"__meta__":{"hash":"sha256:9f15b0609e9c9826bc110cbdc44c801177db0788be9a245c8d03b44a23712136"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"WalletScreenDeferred"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"wallet"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"address"}},{"kind":"Field","name":{"kind":"Name","value":"assets"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"currencyCode"}},{"kind":"Field","name":{"kind":"Name","value":"balance"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"availableAmount"}},{"kind":"Field","name":{"kind":"Name","value":"lockedAmount"}}]}}]}},{"kind":"InlineFragment","directives":[{"kind":"Directive","name":{"kind":"Name","value":"defer"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"label"},"value":{"kind":"StringValue","value":"activity","block":false}}]}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"deposits"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"10"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"withdrawalIntents"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"10"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}}]}}]}}]}}]} as unknown as DocumentNode<WalletScreenDeferredQuery, WalletScreenDeferredQueryVariables>;
export const WalletScreenDocument = {"__meta__":{"hash":"sha256:0cbd4d2d462ddf5ca5714da5767a40adf3744e7e12b5f6bfe0744b5db31fa995"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"WalletScreen"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"wallet"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"restId"}},{"kind":"Field","name":{"kind":"Name","value":"address"}},{"kind":"Field","name":{"kind":"Name","value":"assets"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"currencyCode"}},{"kind":"Field","name":{"kind":"Name","value":"nickname"}},{"kind":"Field","name":{"kind":"Name","value":"balance"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"availableAmount"}},{"kind":"Field","name":{"kind":"Name","value":"lockedAmount"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"deposits"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"10"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"currencyCode"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"withdrawalIntents"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"10"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"amountGross"}},{"kind":"Field","name":{"kind":"Name","value":"destination"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"identifier"}}]}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}}]}}]}}]} as unknown as DocumentNode<WalletScreenQuery, WalletScreenQueryVariables>;
export const WatchWithdrawalDocument = {"__meta__":{"hash":"sha256:559f72cb265c1e5187e502f8d1656b3e20cd82838ffb60d6c6188d58fb0acc81"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"WatchWithdrawal"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"intentId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"withdrawalIntentUpdated"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"intentId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amountGross"}},{"kind":"Field","name":{"kind":"Name","value":"transaction"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hash"}}]}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"finalizedAt"}}]}}]}}]} as unknown as DocumentNode<WatchWithdrawalSubscription, WatchWithdrawalSubscriptionVariables>;