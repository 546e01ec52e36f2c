/**
 * @generated SignedSource<<beebc7036cd579e20a4c6143f742db0e>>
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

import type { ReaderFragment } from 'relay-runtime';
export type WithdrawalIntentStatus = "CANCELLED" | "COMPLETED" | "FAILED" | "PENDING" | "PREPARING" | "REVIEWING" | "UNKNOWN" | "%future added value";
import type { FragmentRefs } from "relay-runtime";
export type WalletScreenWithdrawals_wallet$data = {
  readonly withdrawalIntents: {
    readonly __id: string;
    readonly edges: ReadonlyArray<{
      readonly node: {
        readonly amount: string;
        readonly amountGross: string;
        readonly createdAt: string;
        readonly id: string;
        readonly restId: string;
        readonly status: WithdrawalIntentStatus;
      };
    }>;
  } | null | undefined;
  readonly " $fragmentType": "WalletScreenWithdrawals_wallet";
};
export type WalletScreenWithdrawals_wallet$key = {
  readonly " $data"?: WalletScreenWithdrawals_wallet$data;
  readonly " $fragmentSpreads": FragmentRefs<"WalletScreenWithdrawals_wallet">;
};

const node: ReaderFragment = {
  "argumentDefinitions": [],
  "kind": "Fragment",
  "metadata": {
    "connection": [
      {
        "count": null,
        "cursor": null,
        "direction": "forward",
        "path": [
          "withdrawalIntents"
        ]
      }
    ]
  },
  "name": "WalletScreenWithdrawals_wallet",
  "selections": [
    {
      "alias": "withdrawalIntents",
      "args": null,
      "concreteType": "WithdrawalIntentConnection",
      "kind": "LinkedField",
      "name": "__WalletScreen_withdrawalIntents_connection",
      "plural": false,
      "selections": [
        {
          "alias": null,
          "args": null,
          "concreteType": "WithdrawalIntentEdge",
          "kind": "LinkedField",
          "name": "edges",
          "plural": true,
          "selections": [
            {
              "alias": null,
              "args": null,
              "concreteType": "WithdrawalIntent",
              "kind": "LinkedField",
              "name": "node",
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
                  "name": "amountGross",
                  "storageKey": null
                },
                {
                  "alias": null,
                  "args": null,
                  "kind": "ScalarField",
                  "name": "createdAt",
                  "storageKey": null
                },
                {
                  "alias": null,
                  "args": null,
                  "kind": "ScalarField",
                  "name": "__typename",
                  "storageKey": null
                }
              ],
              "storageKey": null
            },
            {
              "alias": null,
              "args": null,
              "kind": "ScalarField",
              "name": "cursor",
              "storageKey": null
            }
          ],
          "storageKey": null
        },
        {
          "alias": null,
          "args": null,
          "concreteType": "PageInfo",
          "kind": "LinkedField",
          "name": "pageInfo",
          "plural": false,
          "selections": [
            {
              "alias": null,
              "args": null,
              "kind": "ScalarField",
              "name": "endCursor",
              "storageKey": null
            },
            {
              "alias": null,
              "args": null,
              "kind": "ScalarField",
              "name": "hasNextPage",
              "storageKey": null
            }
          ],
          "storageKey": null
        },
        {
          "kind": "ClientExtension",
          "selections": [
            {
              "alias": null,
              "args": null,
              "kind": "ScalarField",
              "name": "__id",
              "storageKey": null
            }
          ]
        }
      ],
      "storageKey": null
    }
  ],
  "type": "Wallet",
  "abstractKey": null
};

(node as any).hash = "bdd9e257ab930c22c922cc6b92e95dda";

export default node;
