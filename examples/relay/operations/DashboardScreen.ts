// The dashboard: every wallet with its balances. relay-compiler reads this file (it is never run);
// the app imports the artifact it writes, __generated__/DashboardScreenQuery.graphql.ts.
import { graphql } from 'relay-runtime';

export const DashboardScreenQuery = graphql`
  query DashboardScreenQuery {
    wallets(first: 20) {
      totalCount
      nodes {
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
    }
  }
`;
