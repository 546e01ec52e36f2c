/**
 * @generated SignedSource<<d9f5fdebd16f976f418da754211fadd5>>
 * @relayHash a3725175780ff146968936f27e016189
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

// @relayRequestID 03660960987073bd0ee6ab519ce4c9bd8ede57cc34147965d9aad06312c885f8

import type { ConcreteRequest } from 'relay-runtime';
export type WalletStatus = "ACTIVE" | "UNKNOWN" | "%future added value";
export type DashboardScreenQuery$variables = Record<PropertyKey, never>;
export type DashboardScreenQuery$data = {
  readonly wallets: {
    readonly nodes: ReadonlyArray<{
      readonly address: string;
      readonly assets: ReadonlyArray<{
        readonly balance: {
          readonly availableAmount: string;
          readonly lockedAmount: string;
        };
        readonly currencyCode: string;
      }>;
      readonly id: string;
      readonly status: WalletStatus;
    }>;
    readonly totalCount: number | null | undefined;
  } | null | undefined;
};
export type DashboardScreenQuery = {
  response: DashboardScreenQuery$data;
  variables: DashboardScreenQuery$variables;
};

const node: ConcreteRequest = (function(){
var v0 = [
  {
    "alias": null,
    "args": [
      {
        "kind": "Literal",
        "name": "first",
        "value": 20
      }
    ],
    "concreteType": "WalletConnection",
    "kind": "LinkedField",
    "name": "wallets",
    "plural": false,
    "selections": [
      {
        "alias": null,
        "args": null,
        "kind": "ScalarField",
        "name": "totalCount",
        "storageKey": null
      },
      {
        "alias": null,
        "args": null,
        "concreteType": "Wallet",
        "kind": "LinkedField",
        "name": "nodes",
        "plural": true,
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
        "storageKey": null
      }
    ],
    "storageKey": "wallets(first:20)"
  }
];
return {
  "fragment": {
    "argumentDefinitions": [],
    "kind": "Fragment",
    "metadata": null,
    "name": "DashboardScreenQuery",
    "selections": (v0/*:: as any*/),
    "type": "Query",
    "abstractKey": null
  },
  "kind": "Request",
  "operation": {
    "argumentDefinitions": [],
    "kind": "Operation",
    "name": "DashboardScreenQuery",
    "selections": (v0/*:: as any*/)
  },
  "params": {
    "cacheID": "a3725175780ff146968936f27e016189",
    "id": "03660960987073bd0ee6ab519ce4c9bd8ede57cc34147965d9aad06312c885f8",
    "metadata": {},
    "name": "DashboardScreenQuery",
    "operationKind": "query",
    "text": "query DashboardScreenQuery {\n  wallets(first: 20) {\n    totalCount\n    nodes {\n      id\n      address\n      status\n      assets {\n        currencyCode\n        balance {\n          availableAmount\n          lockedAmount\n        }\n      }\n    }\n  }\n}\n"
  }
};
})();

(node as any).hash = "157b8f1a2aa4d8f32e3994335b9de510";

export default node;
