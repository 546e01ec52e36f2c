/**
 * @generated SignedSource<<97a01bc75084186169e64990ba1b3eda>>
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

import type { ReaderFragment } from 'relay-runtime';
export type WalletStatus = "ACTIVE" | "UNKNOWN" | "%future added value";
import type { FragmentRefs } from "relay-runtime";
export type WalletScreen_wallet$data = {
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
  readonly " $fragmentType": "WalletScreen_wallet";
};
export type WalletScreen_wallet$key = {
  readonly " $data"?: WalletScreen_wallet$data;
  readonly " $fragmentSpreads": FragmentRefs<"WalletScreen_wallet">;
};

import WalletScreenRefetchQuery_graphql from './WalletScreenRefetchQuery.graphql';

const node: ReaderFragment = {
  "argumentDefinitions": [],
  "kind": "Fragment",
  "metadata": {
    "refetch": {
      "connection": null,
      "fragmentPathInResult": [
        "node"
      ],
      "operation": WalletScreenRefetchQuery_graphql,
      "identifierInfo": {
        "identifierField": "id",
        "identifierQueryVariableName": "id"
      }
    }
  },
  "name": "WalletScreen_wallet",
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
  "type": "Wallet",
  "abstractKey": null
};

(node as any).hash = "a210654063f8038d2822e65fb29701d5";

export default node;
