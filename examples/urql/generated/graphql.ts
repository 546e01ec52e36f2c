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

export type ActivityScreenQueryVariables = Exact<{
  first: number;
  after?: string | null | undefined;
}>;


export type ActivityScreenQuery = { deposits: { totalCount: number | null, pageInfo: { hasNextPage: boolean, endCursor: string | null }, edges: Array<{ cursor: string, node: { id: string, status: DepositStatus, currencyCode: string, amount: string, createdAt: string, wallet: { id: string, address: string } | null } }> } | null };

export type DashboardScreenQueryVariables = Exact<{ [key: string]: never; }>;


export type DashboardScreenQuery = { wallets: { totalCount: number | null, nodes: Array<{ id: string, address: string, status: WalletStatus, assets: Array<{ currencyCode: string, balance: { availableAmount: string, lockedAmount: string } }> }> } | null };

export type WalletScreenQueryVariables = Exact<{
  id: string | number;
}>;


export type WalletScreenQuery = { wallet: { id: string, address: string, status: WalletStatus, assets: Array<{ currencyCode: string, balance: { availableAmount: string, lockedAmount: string } }> } & ({ deposits: { nodes: Array<{ id: string, status: DepositStatus, amount: string, currencyCode: string, createdAt: string }> } | null } | { deposits?: never }) & ({ withdrawalIntents: { nodes: Array<{ id: string, status: WithdrawalIntentStatus, amount: string, amountGross: string, createdAt: string }> } | null } | { withdrawalIntents?: never }) | null };

export type WithdrawScreenMutationVariables = Exact<{
  input: CreateWithdrawalIntentInput;
}>;


export type WithdrawScreenMutation = { createWithdrawalIntent:
    | { __typename: 'BalanceInsufficientError', code: string, message: string }
    | { __typename: 'CreateWithdrawalIntentSuccess', withdrawalIntent: { id: string, restId: string, status: WithdrawalIntentStatus, amount: string, amountFee: string, amountGross: string, destination: { identifier: string } } }
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

export type WithdrawalStatusScreenSubscriptionVariables = Exact<{
  id: string | number;
}>;


export type WithdrawalStatusScreenSubscription = { withdrawalIntentUpdated: { id: string, status: WithdrawalIntentStatus, updatedAt: string, finalizedAt: string | null, transaction: { hash: string } | null } };


export const ActivityScreenDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ActivityScreen"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"deposits"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"totalCount"}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}},{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"currencyCode"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"wallet"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"address"}}]}}]}}]}}]}}]}}]} as unknown as DocumentNode<ActivityScreenQuery, ActivityScreenQueryVariables>;
export const DashboardScreenDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"DashboardScreen"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"wallets"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"20"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"totalCount"}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"address"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"assets"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"currencyCode"}},{"kind":"Field","name":{"kind":"Name","value":"balance"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"availableAmount"}},{"kind":"Field","name":{"kind":"Name","value":"lockedAmount"}}]}}]}}]}}]}}]}}]} as unknown as DocumentNode<DashboardScreenQuery, DashboardScreenQueryVariables>;
export const WalletScreenDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"WalletScreen"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"wallet"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"address"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"assets"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"currencyCode"}},{"kind":"Field","name":{"kind":"Name","value":"balance"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"availableAmount"}},{"kind":"Field","name":{"kind":"Name","value":"lockedAmount"}}]}}]}},{"kind":"InlineFragment","directives":[{"kind":"Directive","name":{"kind":"Name","value":"defer"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"label"},"value":{"kind":"StringValue","value":"activity","block":false}}]}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"deposits"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"5"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"currencyCode"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"withdrawalIntents"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"5"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"amountGross"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}}]}}]}}]}}]} as unknown as DocumentNode<WalletScreenQuery, WalletScreenQueryVariables>;
export const WithdrawScreenDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"WithdrawScreen"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateWithdrawalIntentInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createWithdrawalIntent"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"CreateWithdrawalIntentSuccess"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"withdrawalIntent"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"restId"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"amountFee"}},{"kind":"Field","name":{"kind":"Name","value":"amountGross"}},{"kind":"Field","name":{"kind":"Name","value":"destination"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"identifier"}}]}}]}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"UserError"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"DataInvalidError"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}}]}}]}}]}}]} as unknown as DocumentNode<WithdrawScreenMutation, WithdrawScreenMutationVariables>;
export const WithdrawalStatusScreenDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"WithdrawalStatusScreen"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"withdrawalIntentUpdated"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"finalizedAt"}},{"kind":"Field","name":{"kind":"Name","value":"transaction"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hash"}}]}}]}}]}}]} as unknown as DocumentNode<WithdrawalStatusScreenSubscription, WithdrawalStatusScreenSubscriptionVariables>;