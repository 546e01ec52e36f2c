// The withdraw form: the new intent (put first in the wallet screen's withdrawals by @prependNode),
// or a business failure to show beside the form.
import { graphql } from 'relay-runtime';

export const WithdrawScreenMutation = graphql`
  mutation WithdrawScreenMutation($input: CreateWithdrawalIntentInput!, $connections: [ID!]!) {
    createWithdrawalIntent(input: $input) {
      __typename
      ... on CreateWithdrawalIntentSuccess {
        withdrawalIntent
          @prependNode(connections: $connections, edgeTypeName: "WithdrawalIntentEdge") {
          id
          restId
          status
          amount
          amountFee
          amountGross
          createdAt
        }
      }
      ... on UserError {
        code
        message
      }
      ... on DataInvalidError {
        field
      }
    }
  }
`;
