/**
 * @generated SignedSource<<bbc72eb13f2ceb141a67514b4401fbff>>
 * @relayHash b72fed742ecac55a541eaff23e7dcf8d
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

// @relayRequestID 0fd864573bd2bbdc238328ef44ebecc86924ffc86e26bfb1b4185b217e87cc43

import type { ConcreteRequest } from 'relay-runtime';
import type { FragmentRefs } from "relay-runtime";
export type WalletScreenRefetchQuery$variables = {
  id: string;
};
export type WalletScreenRefetchQuery$data = {
  readonly node: {
    readonly " $fragmentSpreads": FragmentRefs<"WalletScreen_wallet">;
  } | null | undefined;
};
export type WalletScreenRefetchQuery = {
  response: WalletScreenRefetchQuery$data;
  variables: WalletScreenRefetchQuery$variables;
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
    "kind": "Variable",
    "name": "id",
    "variableName": "id"
  }
];
return {
  "fragment": {
    "argumentDefinitions": (v0/*:: as any*/),
    "kind": "Fragment",
    "metadata": null,
    "name": "WalletScreenRefetchQuery",
    "selections": [
      {
        "alias": null,
        "args": (v1/*:: as any*/),
        "concreteType": null,
        "kind": "LinkedField",
        "name": "node",
        "plural": false,
        "selections": [
          {
            "args": null,
            "kind": "FragmentSpread",
            "name": "WalletScreen_wallet"
          }
        ],
        "storageKey": null
      }
    ],
    "type": "Query",
    "abstractKey": null
  },
  "kind": "Request",
  "operation": {
    "argumentDefinitions": (v0/*:: as any*/),
    "kind": "Operation",
    "name": "WalletScreenRefetchQuery",
    "selections": [
      {
        "alias": null,
        "args": (v1/*:: as any*/),
        "concreteType": null,
        "kind": "LinkedField",
        "name": "node",
        "plural": false,
        "selections": [
          {
            "alias": null,
            "args": null,
            "kind": "ScalarField",
            "name": "__typename",
            "storageKey": null
          },
          {
            "alias": null,
            "args": null,
            "kind": "ScalarField",
            "name": "id",
            "storageKey": null
          },
          {
            "kind": "InlineFragment",
            "selections": [
              {
                "alias": null,
                "args": null,
                "kind": "ScalarField",
                "name": "address",
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
                "concreteType": "WalletAsset",
                "kind": "LinkedField",
                "name": "assets",
                "plural": true,
                "selections": [
                  {
                    "alias": null,
                    "args": null,
                    "kind": "ScalarField",
                    "name": "currencyCode",
                    "storageKey": null
                  },
                  {
                    "alias": null,
                    "args": null,
                    "concreteType": "AssetBalance",
                    "kind": "LinkedField",
                    "name": "balance",
                    "plural": false,
                    "selections": [
                      {
                        "alias": null,
                        "args": null,
                        "kind": "ScalarField",
                        "name": "availableAmount",
                        "storageKey": null
                      },
                      {
                        "alias": null,
                        "args": null,
                        "kind": "ScalarField",
                        "name": "lockedAmount",
                        "storageKey": null
                      }
                    ],
                    "storageKey": null
                  }
                ],
                "storageKey": null
              }
            ],
            "type": "Wallet",
            "abstractKey": null
          }
        ],
        "storageKey": null
      }
    ]
  },
  "params": {
    "cacheID": "b72fed742ecac55a541eaff23e7dcf8d",
    "id": "0fd864573bd2bbdc238328ef44ebecc86924ffc86e26bfb1b4185b217e87cc43",
    "metadata": {},
    "name": "WalletScreenRefetchQuery",
    "operationKind": "query",
    "text": "query WalletScreenRefetchQuery(\n  $id: ID!\n) {\n  node(id: $id) {\n    __typename\n    ...WalletScreen_wallet\n    id\n  }\n}\n\nfragment WalletScreen_wallet on Wallet {\n  id\n  address\n  status\n  assets {\n    currencyCode\n    balance {\n      availableAmount\n      lockedAmount\n    }\n  }\n}\n"
  }
};
})();

(node as any).hash = "a210654063f8038d2822e65fb29701d5";

export default node;
