// The withdrawal's status screen: the intent as it is now, then each change, until a final status.
import { graphql } from 'relay-runtime';

export const WithdrawalStatusScreenSubscription = graphql`
  subscription WithdrawalStatusScreenSubscription($id: ID!) {
    withdrawalIntentUpdated(id: $id) {
      id
      status
      updatedAt
      finalizedAt
    }
  }
`;
