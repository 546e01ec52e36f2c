/**
 * @generated SignedSource<<0846d59d1f0c30d9530e43947939c126>>
 * @relayHash 8481ccdaf1ecd1a63b4ece18e0683dac
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

// @relayRequestID df057c6ed36bed59861bb49db01d51495c1f719877b5b692da24689a3e4553a7

import type { ConcreteRequest } from 'relay-runtime';
export type ServiceFeeMode = "EXCLUSIVE" | "INCLUSIVE" | "UNKNOWN" | "%future added value";
export type WithdrawalIntentStatus = "CANCELLED" | "COMPLETED" | "FAILED" | "PENDING" | "PREPARING" | "REVIEWING" | "UNKNOWN" | "%future added value";
export type CreateWithdrawalIntentInput = {
  amount: string;
  currencyCode: string;
  destination: WithdrawalDestinationInput;
  idempotencyKey?: string | null | undefined;
  serviceFeeMode: ServiceFeeMode;
  walletId: string;
};
export type WithdrawalDestinationInput = {
  identifier: string;
  rail: string;
  type: string;
};
export type WithdrawScreenMutation$variables = {
  connections: ReadonlyArray<string>;
  input: CreateWithdrawalIntentInput;
};
export type WithdrawScreenMutation$data = {
  readonly createWithdrawalIntent: {
    readonly __typename: string;
    readonly code?: string;
    readonly field?: ReadonlyArray<string> | null | undefined;
    readonly message?: string;
    readonly withdrawalIntent?: {
      readonly amount: string;
      readonly amountFee: string;
      readonly amountGross: string;
      readonly createdAt: string;
      readonly id: string;
      readonly restId: string;
      readonly status: WithdrawalIntentStatus;
    };
  };
};
export type WithdrawScreenMutation = {
  response: WithdrawScreenMutation$data;
  variables: WithdrawScreenMutation$variables;
};

const node: ConcreteRequest = (function(){
var v0 = {
  "defaultValue": null,
  "kind": "LocalArgument",
  "name": "connections"
},
v1 = {
  "defaultValue": null,
  "kind": "LocalArgument",
  "name": "input"
},
v2 = [
  {
    "kind": "Variable",
    "name": "input",
    "variableName": "input"
  }
],
v3 = {
  "alias": null,
  "args": null,
  "kind": "ScalarField",
  "name": "__typename",
  "storageKey": null
},
v4 = {
  "alias": null,
  "args": null,
  "concreteType": "WithdrawalIntent",
  "kind": "LinkedField",
  "name": "withdrawalIntent",
  "plural": false,
  "selections": [
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "id",
      "storageKey": null
    },
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "restId",
      "storageKey": null
    },
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "status",
      "storageKey": null
    },
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "amount",
      "storageKey": null
    },
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "amountFee",
      "storageKey": null
    },
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "amountGross",
      "storageKey": null
    },
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "createdAt",
      "storageKey": null
    }
  ],
  "storageKey": null
},
v5 = {
  "kind": "InlineFragment",
  "selections": [
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "code",
      "storageKey": null
    },
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "message",
      "storageKey": null
    }
  ],
  "type": "UserError",
  "abstractKey": "__isUserError"
},
v6 = {
  "kind": "InlineFragment",
  "selections": [
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "field",
      "storageKey": null
    }
  ],
  "type": "DataInvalidError",
  "abstractKey": null
};
return {
  "fragment": {
    "argumentDefinitions": [
      (v0/*:: as any*/),
      (v1/*:: as any*/)
    ],
    "kind": "Fragment",
    "metadata": null,
    "name": "WithdrawScreenMutation",
    "selections": [
      {
        "alias": null,
        "args": (v2/*:: as any*/),
        "concreteType": null,
        "kind": "LinkedField",
        "name": "createWithdrawalIntent",
        "plural": false,
        "selections": [
          (v3/*:: as any*/),
          {
            "kind": "InlineFragment",
            "selections": [
              (v4/*:: as any*/)
            ],
            "type": "CreateWithdrawalIntentSuccess",
            "abstractKey": null
          },
          (v5/*:: as any*/),
          (v6/*:: as any*/)
        ],
        "storageKey": null
      }
    ],
    "type": "Mutation",
    "abstractKey": null
  },
  "kind": "Request",
  "operation": {
    "argumentDefinitions": [
      (v1/*:: as any*/),
      (v0/*:: as any*/)
    ],
    "kind": "Operation",
    "name": "WithdrawScreenMutation",
    "selections": [
      {
        "alias": null,
        "args": (v2/*:: as any*/),
        "concreteType": null,
        "kind": "LinkedField",
        "name": "createWithdrawalIntent",
        "plural": false,
        "selections": [
          (v3/*:: as any*/),
          {
            "kind": "InlineFragment",
            "selections": [
              (v4/*:: as any*/),
              {
                "alias": null,
                "args": null,
                "filters": null,
                "handle": "prependNode",
                "key": "",
                "kind": "LinkedHandle",
                "name": "withdrawalIntent",
                "handleArgs": [
                  {
                    "kind": "Variable",
                    "name": "connections",
                    "variableName": "connections"
                  },
                  {
                    "kind": "Literal",
                    "name": "edgeTypeName",
                    "value": "WithdrawalIntentEdge"
                  }
                ]
              }
            ],
            "type": "CreateWithdrawalIntentSuccess",
            "abstractKey": null
          },
          (v5/*:: as any*/),
          (v6/*:: as any*/)
        ],
        "storageKey": null
      }
    ]
  },
  "params": {
    "cacheID": "8481ccdaf1ecd1a63b4ece18e0683dac",
    "id": "df057c6ed36bed59861bb49db01d51495c1f719877b5b692da24689a3e4553a7",
    "metadata": {},
    "name": "WithdrawScreenMutation",
    "operationKind": "mutation",
    "text": "mutation WithdrawScreenMutation(\n  $input: CreateWithdrawalIntentInput!\n) {\n  createWithdrawalIntent(input: $input) {\n    __typename\n    ... on CreateWithdrawalIntentSuccess {\n      withdrawalIntent {\n        id\n        restId\n        status\n        amount\n        amountFee\n        amountGross\n        createdAt\n      }\n    }\n    ... on UserError {\n      __isUserError: __typename\n      code\n      message\n    }\n    ... on DataInvalidError {\n      field\n    }\n  }\n}\n"
  }
};
})();

(node as any).hash = "f1e61627193f5d6a1be92b59c901c2f3";

export default node;
