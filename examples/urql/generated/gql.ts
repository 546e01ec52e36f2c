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
    "query ActivityScreen($first: Int!, $after: String) {\n  deposits(first: $first, after: $after) {\n    totalCount\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n    edges {\n      cursor\n      node {\n        id\n        status\n        currencyCode\n        amount\n        createdAt\n        wallet {\n          id\n          address\n        }\n      }\n    }\n  }\n}": typeof types.ActivityScreenDocument,
    "query DashboardScreen {\n  wallets(first: 20) {\n    totalCount\n    nodes {\n      id\n      address\n      status\n      assets {\n        currencyCode\n        balance {\n          availableAmount\n          lockedAmount\n        }\n      }\n    }\n  }\n}": typeof types.DashboardScreenDocument,
    "query WalletScreen($id: ID!) {\n  wallet(id: $id) {\n    id\n    address\n    status\n    assets {\n      currencyCode\n      balance {\n        availableAmount\n        lockedAmount\n      }\n    }\n    ... @defer(label: \"activity\") {\n      deposits(first: 5) {\n        nodes {\n          id\n          status\n          amount\n          currencyCode\n          createdAt\n        }\n      }\n      withdrawalIntents(first: 5) {\n        nodes {\n          id\n          status\n          amount\n          amountGross\n          createdAt\n        }\n      }\n    }\n  }\n}": typeof types.WalletScreenDocument,
    "mutation WithdrawScreen($input: CreateWithdrawalIntentInput!) {\n  createWithdrawalIntent(input: $input) {\n    __typename\n    ... on CreateWithdrawalIntentSuccess {\n      withdrawalIntent {\n        id\n        restId\n        status\n        amount\n        amountFee\n        amountGross\n        destination {\n          identifier\n        }\n      }\n    }\n    ... on UserError {\n      code\n      message\n    }\n    ... on DataInvalidError {\n      field\n    }\n  }\n}": typeof types.WithdrawScreenDocument,
    "subscription WithdrawalStatusScreen($id: ID!) {\n  withdrawalIntentUpdated(id: $id) {\n    id\n    status\n    updatedAt\n    finalizedAt\n    transaction {\n      hash\n    }\n  }\n}": typeof types.WithdrawalStatusScreenDocument,
};
const documents: Documents = {
    "query ActivityScreen($first: Int!, $after: String) {\n  deposits(first: $first, after: $after) {\n    totalCount\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n    edges {\n      cursor\n      node {\n        id\n        status\n        currencyCode\n        amount\n        createdAt\n        wallet {\n          id\n          address\n        }\n      }\n    }\n  }\n}": types.ActivityScreenDocument,
    "query DashboardScreen {\n  wallets(first: 20) {\n    totalCount\n    nodes {\n      id\n      address\n      status\n      assets {\n        currencyCode\n        balance {\n          availableAmount\n          lockedAmount\n        }\n      }\n    }\n  }\n}": types.DashboardScreenDocument,
    "query WalletScreen($id: ID!) {\n  wallet(id: $id) {\n    id\n    address\n    status\n    assets {\n      currencyCode\n      balance {\n        availableAmount\n        lockedAmount\n      }\n    }\n    ... @defer(label: \"activity\") {\n      deposits(first: 5) {\n        nodes {\n          id\n          status\n          amount\n          currencyCode\n          createdAt\n        }\n      }\n      withdrawalIntents(first: 5) {\n        nodes {\n          id\n          status\n          amount\n          amountGross\n          createdAt\n        }\n      }\n    }\n  }\n}": types.WalletScreenDocument,
    "mutation WithdrawScreen($input: CreateWithdrawalIntentInput!) {\n  createWithdrawalIntent(input: $input) {\n    __typename\n    ... on CreateWithdrawalIntentSuccess {\n      withdrawalIntent {\n        id\n        restId\n        status\n        amount\n        amountFee\n        amountGross\n        destination {\n          identifier\n        }\n      }\n    }\n    ... on UserError {\n      code\n      message\n    }\n    ... on DataInvalidError {\n      field\n    }\n  }\n}": types.WithdrawScreenDocument,
    "subscription WithdrawalStatusScreen($id: ID!) {\n  withdrawalIntentUpdated(id: $id) {\n    id\n    status\n    updatedAt\n    finalizedAt\n    transaction {\n      hash\n    }\n  }\n}": types.WithdrawalStatusScreenDocument,
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
export function graphql(source: "query ActivityScreen($first: Int!, $after: String) {\n  deposits(first: $first, after: $after) {\n    totalCount\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n    edges {\n      cursor\n      node {\n        id\n        status\n        currencyCode\n        amount\n        createdAt\n        wallet {\n          id\n          address\n        }\n      }\n    }\n  }\n}"): (typeof documents)["query ActivityScreen($first: Int!, $after: String) {\n  deposits(first: $first, after: $after) {\n    totalCount\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n    edges {\n      cursor\n      node {\n        id\n        status\n        currencyCode\n        amount\n        createdAt\n        wallet {\n          id\n          address\n        }\n      }\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query DashboardScreen {\n  wallets(first: 20) {\n    totalCount\n    nodes {\n      id\n      address\n      status\n      assets {\n        currencyCode\n        balance {\n          availableAmount\n          lockedAmount\n        }\n      }\n    }\n  }\n}"): (typeof documents)["query DashboardScreen {\n  wallets(first: 20) {\n    totalCount\n    nodes {\n      id\n      address\n      status\n      assets {\n        currencyCode\n        balance {\n          availableAmount\n          lockedAmount\n        }\n      }\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query WalletScreen($id: ID!) {\n  wallet(id: $id) {\n    id\n    address\n    status\n    assets {\n      currencyCode\n      balance {\n        availableAmount\n        lockedAmount\n      }\n    }\n    ... @defer(label: \"activity\") {\n      deposits(first: 5) {\n        nodes {\n          id\n          status\n          amount\n          currencyCode\n          createdAt\n        }\n      }\n      withdrawalIntents(first: 5) {\n        nodes {\n          id\n          status\n          amount\n          amountGross\n          createdAt\n        }\n      }\n    }\n  }\n}"): (typeof documents)["query WalletScreen($id: ID!) {\n  wallet(id: $id) {\n    id\n    address\n    status\n    assets {\n      currencyCode\n      balance {\n        availableAmount\n        lockedAmount\n      }\n    }\n    ... @defer(label: \"activity\") {\n      deposits(first: 5) {\n        nodes {\n          id\n          status\n          amount\n          currencyCode\n          createdAt\n        }\n      }\n      withdrawalIntents(first: 5) {\n        nodes {\n          id\n          status\n          amount\n          amountGross\n          createdAt\n        }\n      }\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation WithdrawScreen($input: CreateWithdrawalIntentInput!) {\n  createWithdrawalIntent(input: $input) {\n    __typename\n    ... on CreateWithdrawalIntentSuccess {\n      withdrawalIntent {\n        id\n        restId\n        status\n        amount\n        amountFee\n        amountGross\n        destination {\n          identifier\n        }\n      }\n    }\n    ... on UserError {\n      code\n      message\n    }\n    ... on DataInvalidError {\n      field\n    }\n  }\n}"): (typeof documents)["mutation WithdrawScreen($input: CreateWithdrawalIntentInput!) {\n  createWithdrawalIntent(input: $input) {\n    __typename\n    ... on CreateWithdrawalIntentSuccess {\n      withdrawalIntent {\n        id\n        restId\n        status\n        amount\n        amountFee\n        amountGross\n        destination {\n          identifier\n        }\n      }\n    }\n    ... on UserError {\n      code\n      message\n    }\n    ... on DataInvalidError {\n      field\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "subscription WithdrawalStatusScreen($id: ID!) {\n  withdrawalIntentUpdated(id: $id) {\n    id\n    status\n    updatedAt\n    finalizedAt\n    transaction {\n      hash\n    }\n  }\n}"): (typeof documents)["subscription WithdrawalStatusScreen($id: ID!) {\n  withdrawalIntentUpdated(id: $id) {\n    id\n    status\n    updatedAt\n    finalizedAt\n    transaction {\n      hash\n    }\n  }\n}"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;