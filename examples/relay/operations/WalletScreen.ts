// One wallet's screen: the wallet and its balances in the first payload; its deposits and its
// withdrawal intents (reads of the merchant's lists) each in a later part, under @defer.
import { graphql } from 'relay-runtime';

export const WalletScreenQuery = graphql`
  query WalletScreenQuery($id: ID!) {
    wallet(id: $id) {
      id
      ...WalletScreen_wallet
      ...WalletScreenDeposits_wallet @defer(label: "deposits")
      ...WalletScreenWithdrawals_wallet @defer(label: "withdrawals")
    }
  }
`;

// The balances, refetched alone through node(id:) (WalletScreenRefetchQuery).
export const WalletScreenWallet = graphql`
  fragment WalletScreen_wallet on Wallet @refetchable(queryName: "WalletScreenRefetchQuery") {
    id
    address
    status
    assets {
      currencyCode
      balance {
        availableAmount
        lockedAmount
      }
    }
  }
`;

// The wallet's deposits, paged both ways (WalletScreenDepositsPaginationQuery, through node(id:)):
// `first`/`after` down from the newest, `last`/`before` up from the oldest.
export const WalletScreenDeposits = graphql`
  fragment WalletScreenDeposits_wallet on Wallet
  @refetchable(queryName: "WalletScreenDepositsPaginationQuery")
  @argumentDefinitions(
    first: { type: "Int", defaultValue: 5 }
    after: { type: "String" }
    last: { type: "Int" }
    before: { type: "String" }
  ) {
    deposits(first: $first, after: $after, last: $last, before: $before)
      @connection(key: "WalletScreen_deposits") {
      totalCount
      pageInfo {
        hasNextPage
        hasPreviousPage
        startCursor
        endCursor
      }
      edges {
        node {
          id
          restId
          status
          amount
          currencyCode
          createdAt
        }
      }
    }
  }
`;

// The latest withdrawal intents; a new one is put first by the withdraw mutation (@prependNode).
export const WalletScreenWithdrawals = graphql`
  fragment WalletScreenWithdrawals_wallet on Wallet {
    withdrawalIntents(first: 5) @connection(key: "WalletScreen_withdrawalIntents") {
      __id
      edges {
        node {
          id
          restId
          status
          amount
          amountGross
          createdAt
        }
      }
    }
  }
`;
