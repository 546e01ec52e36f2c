/**
 * @generated SignedSource<<95344ef67c831196ec5b2fd4a2041497>>
 * @relayHash 6628153668e56a9b0173df14dd3b35b1
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

// @relayRequestID 675c4aca960f80bd61702f6ab17531b790879894ceb405a6cd7d474ee830b619

import type { ConcreteRequest } from 'relay-runtime';
export type WithdrawalIntentStatus = "CANCELLED" | "COMPLETED" | "FAILED" | "PENDING" | "PREPARING" | "REVIEWING" | "UNKNOWN" | "%future added value";
export type WithdrawalStatusScreenSubscription$variables = {
  id: string;
};
export type WithdrawalStatusScreenSubscription$data = {
  readonly withdrawalIntentUpdated: {
    readonly finalizedAt: string | null | undefined;
    readonly id: string;
    readonly status: WithdrawalIntentStatus;
    readonly updatedAt: string;
  };
};
export type WithdrawalStatusScreenSubscription = {
  response: WithdrawalStatusScreenSubscription$data;
  variables: WithdrawalStatusScreenSubscription$variables;
};

const node: ConcreteRequest = (function(){
var v0 = [
  {
    "defaultValue": null,
    "kind": "LocalArgument",
    "name": "id"
  }
],
v1 = [
  {
    "alias": null,
    "args": [
      {
        "kind": "Variable",
        "name": "id",
        "variableName": "id"
      }
    ],
    "concreteType": "WithdrawalIntent",
    "kind": "LinkedField",
    "name": "withdrawalIntentUpdated",
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
        "name": "status",
        "storageKey": null
      },
      {
        "alias": null,
        "args": null,
        "kind": "ScalarField",
        "name": "updatedAt",
        "storageKey": null
      },
      {
        "alias": null,
        "args": null,
        "kind": "ScalarField",
        "name": "finalizedAt",
        "storageKey": null
      }
    ],
    "storageKey": null
  }
];
return {
  "fragment": {
    "argumentDefinitions": (v0/*:: as any*/),
    "kind": "Fragment",
    "metadata": null,
    "name": "WithdrawalStatusScreenSubscription",
    "selections": (v1/*:: as any*/),
    "type": "Subscription",
    "abstractKey": null
  },
  "kind": "Request",
  "operation": {
    "argumentDefinitions": (v0/*:: as any*/),
    "kind": "Operation",
    "name": "WithdrawalStatusScreenSubscription",
    "selections": (v1/*:: as any*/)
  },
  "params": {
    "cacheID": "6628153668e56a9b0173df14dd3b35b1",
    "id": "675c4aca960f80bd61702f6ab17531b790879894ceb405a6cd7d474ee830b619",
    "metadata": {},
    "name": "WithdrawalStatusScreenSubscription",
    "operationKind": "subscription",
    "text": "subscription WithdrawalStatusScreenSubscription(\n  $id: ID!\n) {\n  withdrawalIntentUpdated(id: $id) {\n    id\n    status\n    updatedAt\n    finalizedAt\n  }\n}\n"
  }
};
})();

(node as any).hash = "5d90f15318519c2e22457f0587418889";

export default node;
