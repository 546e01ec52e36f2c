// The activity feed: the merchant's newest deposits, a page at a time (ActivityScreenPaginationQuery
// asks for the page after the connection's endCursor; Relay's connection handler appends it).
// A deposit's wallet needs a call of its own: @catch keeps the feed when that call fails, with the
// error in place of the wallet.
import { graphql } from 'relay-runtime';

export const ActivityScreenQuery = graphql`
  query ActivityScreenQuery($first: Int!) {
    ...ActivityScreen_query @arguments(first: $first)
  }
`;

export const ActivityScreenFeed = graphql`
  fragment ActivityScreen_query on Query
  @refetchable(queryName: "ActivityScreenPaginationQuery")
  @argumentDefinitions(first: { type: "Int!" }, after: { type: "String" }) {
    deposits(first: $first, after: $after) @connection(key: "ActivityScreen_deposits") {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          restId
          status
          currencyCode
          amount
          createdAt
          wallet @catch {
            id
            address
          }
        }
      }
    }
  }
`;
