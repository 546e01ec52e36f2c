/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "query ActivityFeed($first: Int = 50, $after: String, $status: [DepositStatus!]) {\n  deposits(first: $first, after: $after, status: $status) {\n    totalCount\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n    edges {\n      cursor\n      node {\n        id\n        status\n        currencyCode\n        amount\n        amountNet\n        createdAt\n        wallet {\n          id\n          address\n        }\n      }\n    }\n  }\n}": typeof types.ActivityFeedDocument,
    "mutation CreateWithdrawal($input: CreateWithdrawalIntentInput!) {\n  createWithdrawalIntent(input: $input) {\n    __typename\n    ... on CreateWithdrawalIntentSuccess {\n      withdrawalIntent {\n        id\n        restId\n        status\n        serviceFeeMode\n        amount\n        amountFee\n        amountNet\n        amountGross\n        transaction {\n          hash\n        }\n        finalizedAt\n      }\n    }\n    ... on UserError {\n      code\n      message\n    }\n    ... on DataInvalidError {\n      field\n    }\n  }\n}": typeof types.CreateWithdrawalDocument,
    "query Dashboard($first: Int = 20) {\n  wallets(first: $first) {\n    totalCount\n    nodes {\n      id\n      restId\n      address\n      status\n      assets {\n        currencyCode\n        balance {\n          availableAmount\n          lockedAmount\n        }\n      }\n    }\n  }\n}": typeof types.DashboardDocument,
    "subscription LiveDeposits($walletId: ID, $status: [DepositStatus!]) {\n  depositsUpdated(walletId: $walletId, status: $status) {\n    id\n    status\n    amount\n    amountNet\n    currencyCode\n    walletRestId\n    transaction {\n      hash\n    }\n    updatedAt\n  }\n}": typeof types.LiveDepositsDocument,
    "subscription LiveWithdrawals {\n  withdrawalIntentsUpdated {\n    id\n    status\n    amount\n    updatedAt\n  }\n}": typeof types.LiveWithdrawalsDocument,
    "query NodeById($id: ID!) {\n  node(id: $id) {\n    __typename\n    id\n    ... on Wallet {\n      address\n    }\n    ... on Deposit {\n      amount\n      depositStatus: status\n    }\n    ... on WithdrawalIntent {\n      amount\n      withdrawalStatus: status\n    }\n  }\n}": typeof types.NodeByIdDocument,
    "query WalletScreenDeferred($id: ID!) {\n  wallet(id: $id) {\n    id\n    address\n    assets {\n      currencyCode\n      balance {\n        availableAmount\n        lockedAmount\n      }\n    }\n    ... @defer(label: \"activity\") {\n      deposits(first: 10) {\n        nodes {\n          id\n          status\n          amount\n          createdAt\n        }\n      }\n      withdrawalIntents(first: 10) {\n        nodes {\n          id\n          status\n          amount\n          createdAt\n        }\n      }\n    }\n  }\n}": typeof types.WalletScreenDeferredDocument,
    "query WalletScreen($id: ID!) {\n  wallet(id: $id) {\n    id\n    restId\n    address\n    assets {\n      currencyCode\n      nickname\n      balance {\n        availableAmount\n        lockedAmount\n      }\n    }\n    deposits(first: 10) {\n      nodes {\n        id\n        status\n        amount\n        currencyCode\n        createdAt\n      }\n    }\n    withdrawalIntents(first: 10) {\n      nodes {\n        id\n        status\n        amount\n        amountGross\n        destination {\n          identifier\n        }\n        createdAt\n      }\n    }\n  }\n}": typeof types.WalletScreenDocument,
    "subscription WatchWithdrawal($intentId: ID!) {\n  withdrawalIntentUpdated(id: $intentId) {\n    id\n    status\n    amountGross\n    transaction {\n      hash\n    }\n    updatedAt\n    finalizedAt\n  }\n}": typeof types.WatchWithdrawalDocument,
};
const documents: Documents = {
    "query ActivityFeed($first: Int = 50, $after: String, $status: [DepositStatus!]) {\n  deposits(first: $first, after: $after, status: $status) {\n    totalCount\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n    edges {\n      cursor\n      node {\n        id\n        status\n        currencyCode\n        amount\n        amountNet\n        createdAt\n        wallet {\n          id\n          address\n        }\n      }\n    }\n  }\n}": types.ActivityFeedDocument,
    "mutation CreateWithdrawal($input: CreateWithdrawalIntentInput!) {\n  createWithdrawalIntent(input: $input) {\n    __typename\n    ... on CreateWithdrawalIntentSuccess {\n      withdrawalIntent {\n        id\n        restId\n        status\n        serviceFeeMode\n        amount\n        amountFee\n        amountNet\n        amountGross\n        transaction {\n          hash\n        }\n        finalizedAt\n      }\n    }\n    ... on UserError {\n      code\n      message\n    }\n    ... on DataInvalidError {\n      field\n    }\n  }\n}": types.CreateWithdrawalDocument,
    "query Dashboard($first: Int = 20) {\n  wallets(first: $first) {\n    totalCount\n    nodes {\n      id\n      restId\n      address\n      status\n      assets {\n        currencyCode\n        balance {\n          availableAmount\n          lockedAmount\n        }\n      }\n    }\n  }\n}": types.DashboardDocument,
    "subscription LiveDeposits($walletId: ID, $status: [DepositStatus!]) {\n  depositsUpdated(walletId: $walletId, status: $status) {\n    id\n    status\n    amount\n    amountNet\n    currencyCode\n    walletRestId\n    transaction {\n      hash\n    }\n    updatedAt\n  }\n}": types.LiveDepositsDocument,
    "subscription LiveWithdrawals {\n  withdrawalIntentsUpdated {\n    id\n    status\n    amount\n    updatedAt\n  }\n}": types.LiveWithdrawalsDocument,
    "query NodeById($id: ID!) {\n  node(id: $id) {\n    __typename\n    id\n    ... on Wallet {\n      address\n    }\n    ... on Deposit {\n      amount\n      depositStatus: status\n    }\n    ... on WithdrawalIntent {\n      amount\n      withdrawalStatus: status\n    }\n  }\n}": types.NodeByIdDocument,
    "query WalletScreenDeferred($id: ID!) {\n  wallet(id: $id) {\n    id\n    address\n    assets {\n      currencyCode\n      balance {\n        availableAmount\n        lockedAmount\n      }\n    }\n    ... @defer(label: \"activity\") {\n      deposits(first: 10) {\n        nodes {\n          id\n          status\n          amount\n          createdAt\n        }\n      }\n      withdrawalIntents(first: 10) {\n        nodes {\n          id\n          status\n          amount\n          createdAt\n        }\n      }\n    }\n  }\n}": types.WalletScreenDeferredDocument,
    "query WalletScreen($id: ID!) {\n  wallet(id: $id) {\n    id\n    restId\n    address\n    assets {\n      currencyCode\n      nickname\n      balance {\n        availableAmount\n        lockedAmount\n      }\n    }\n    deposits(first: 10) {\n      nodes {\n        id\n        status\n        amount\n        currencyCode\n        createdAt\n      }\n    }\n    withdrawalIntents(first: 10) {\n      nodes {\n        id\n        status\n        amount\n        amountGross\n        destination {\n          identifier\n        }\n        createdAt\n      }\n    }\n  }\n}": types.WalletScreenDocument,
    "subscription WatchWithdrawal($intentId: ID!) {\n  withdrawalIntentUpdated(id: $intentId) {\n    id\n    status\n    amountGross\n    transaction {\n      hash\n    }\n    updatedAt\n    finalizedAt\n  }\n}": types.WatchWithdrawalDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query ActivityFeed($first: Int = 50, $after: String, $status: [DepositStatus!]) {\n  deposits(first: $first, after: $after, status: $status) {\n    totalCount\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n    edges {\n      cursor\n      node {\n        id\n        status\n        currencyCode\n        amount\n        amountNet\n        createdAt\n        wallet {\n          id\n          address\n        }\n      }\n    }\n  }\n}"): (typeof documents)["query ActivityFeed($first: Int = 50, $after: String, $status: [DepositStatus!]) {\n  deposits(first: $first, after: $after, status: $status) {\n    totalCount\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n    edges {\n      cursor\n      node {\n        id\n        status\n        currencyCode\n        amount\n        amountNet\n        createdAt\n        wallet {\n          id\n          address\n        }\n      }\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation CreateWithdrawal($input: CreateWithdrawalIntentInput!) {\n  createWithdrawalIntent(input: $input) {\n    __typename\n    ... on CreateWithdrawalIntentSuccess {\n      withdrawalIntent {\n        id\n        restId\n        status\n        serviceFeeMode\n        amount\n        amountFee\n        amountNet\n        amountGross\n        transaction {\n          hash\n        }\n        finalizedAt\n      }\n    }\n    ... on UserError {\n      code\n      message\n    }\n    ... on DataInvalidError {\n      field\n    }\n  }\n}"): (typeof documents)["mutation CreateWithdrawal($input: CreateWithdrawalIntentInput!) {\n  createWithdrawalIntent(input: $input) {\n    __typename\n    ... on CreateWithdrawalIntentSuccess {\n      withdrawalIntent {\n        id\n        restId\n        status\n        serviceFeeMode\n        amount\n        amountFee\n        amountNet\n        amountGross\n        transaction {\n          hash\n        }\n        finalizedAt\n      }\n    }\n    ... on UserError {\n      code\n      message\n    }\n    ... on DataInvalidError {\n      field\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query Dashboard($first: Int = 20) {\n  wallets(first: $first) {\n    totalCount\n    nodes {\n      id\n      restId\n      address\n      status\n      assets {\n        currencyCode\n        balance {\n          availableAmount\n          lockedAmount\n        }\n      }\n    }\n  }\n}"): (typeof documents)["query Dashboard($first: Int = 20) {\n  wallets(first: $first) {\n    totalCount\n    nodes {\n      id\n      restId\n      address\n      status\n      assets {\n        currencyCode\n        balance {\n          availableAmount\n          lockedAmount\n        }\n      }\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "subscription LiveDeposits($walletId: ID, $status: [DepositStatus!]) {\n  depositsUpdated(walletId: $walletId, status: $status) {\n    id\n    status\n    amount\n    amountNet\n    currencyCode\n    walletRestId\n    transaction {\n      hash\n    }\n    updatedAt\n  }\n}"): (typeof documents)["subscription LiveDeposits($walletId: ID, $status: [DepositStatus!]) {\n  depositsUpdated(walletId: $walletId, status: $status) {\n    id\n    status\n    amount\n    amountNet\n    currencyCode\n    walletRestId\n    transaction {\n      hash\n    }\n    updatedAt\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "subscription LiveWithdrawals {\n  withdrawalIntentsUpdated {\n    id\n    status\n    amount\n    updatedAt\n  }\n}"): (typeof documents)["subscription LiveWithdrawals {\n  withdrawalIntentsUpdated {\n    id\n    status\n    amount\n    updatedAt\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query NodeById($id: ID!) {\n  node(id: $id) {\n    __typename\n    id\n    ... on Wallet {\n      address\n    }\n    ... on Deposit {\n      amount\n      depositStatus: status\n    }\n    ... on WithdrawalIntent {\n      amount\n      withdrawalStatus: status\n    }\n  }\n}"): (typeof documents)["query NodeById($id: ID!) {\n  node(id: $id) {\n    __typename\n    id\n    ... on Wallet {\n      address\n    }\n    ... on Deposit {\n      amount\n      depositStatus: status\n    }\n    ... on WithdrawalIntent {\n      amount\n      withdrawalStatus: status\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query WalletScreenDeferred($id: ID!) {\n  wallet(id: $id) {\n    id\n    address\n    assets {\n      currencyCode\n      balance {\n        availableAmount\n        lockedAmount\n      }\n    }\n    ... @defer(label: \"activity\") {\n      deposits(first: 10) {\n        nodes {\n          id\n          status\n          amount\n          createdAt\n        }\n      }\n      withdrawalIntents(first: 10) {\n        nodes {\n          id\n          status\n          amount\n          createdAt\n        }\n      }\n    }\n  }\n}"): (typeof documents)["query WalletScreenDeferred($id: ID!) {\n  wallet(id: $id) {\n    id\n    address\n    assets {\n      currencyCode\n      balance {\n        availableAmount\n        lockedAmount\n      }\n    }\n    ... @defer(label: \"activity\") {\n      deposits(first: 10) {\n        nodes {\n          id\n          status\n          amount\n          createdAt\n        }\n      }\n      withdrawalIntents(first: 10) {\n        nodes {\n          id\n          status\n          amount\n          createdAt\n        }\n      }\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query WalletScreen($id: ID!) {\n  wallet(id: $id) {\n    id\n    restId\n    address\n    assets {\n      currencyCode\n      nickname\n      balance {\n        availableAmount\n        lockedAmount\n      }\n    }\n    deposits(first: 10) {\n      nodes {\n        id\n        status\n        amount\n        currencyCode\n        createdAt\n      }\n    }\n    withdrawalIntents(first: 10) {\n      nodes {\n        id\n        status\n        amount\n        amountGross\n        destination {\n          identifier\n        }\n        createdAt\n      }\n    }\n  }\n}"): (typeof documents)["query WalletScreen($id: ID!) {\n  wallet(id: $id) {\n    id\n    restId\n    address\n    assets {\n      currencyCode\n      nickname\n      balance {\n        availableAmount\n        lockedAmount\n      }\n    }\n    deposits(first: 10) {\n      nodes {\n        id\n        status\n        amount\n        currencyCode\n        createdAt\n      }\n    }\n    withdrawalIntents(first: 10) {\n      nodes {\n        id\n        status\n        amount\n        amountGross\n        destination {\n          identifier\n        }\n        createdAt\n      }\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "subscription WatchWithdrawal($intentId: ID!) {\n  withdrawalIntentUpdated(id: $intentId) {\n    id\n    status\n    amountGross\n    transaction {\n      hash\n    }\n    updatedAt\n    finalizedAt\n  }\n}"): (typeof documents)["subscription WatchWithdrawal($intentId: ID!) {\n  withdrawalIntentUpdated(id: $intentId) {\n    id\n    status\n    amountGross\n    transaction {\n      hash\n    }\n    updatedAt\n    finalizedAt\n  }\n}"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;