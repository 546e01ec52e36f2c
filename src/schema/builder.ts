import SchemaBuilder from '@pothos/core';
import ErrorsPlugin from '@pothos/plugin-errors';
import RelayPlugin, { decodeGlobalID } from '@pothos/plugin-relay';
import type { GatewayContext } from '../context.ts';
import { badUserInput } from '../errors.ts';
import { NODE_TYPES } from '../global-ids.ts';

export const builder = new SchemaBuilder<{
  Context: GatewayContext;
  Scalars: {
    Decimal: { Input: string; Output: string };
    DateTime: { Input: Date; Output: Date | string };
  };
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
}>({
  // Fields are non-null unless they say otherwise: a nullable field is a decision, made per field.
  defaultFieldNullability: false,
  plugins: [ErrorsPlugin, RelayPlugin],
  relay: {
    nodesOnConnection: true,
    edgesFieldOptions: { nullable: false },
    nodeFieldOptions: { nullable: false },
    decodeGlobalID: (globalID: string) => {
      let decoded: { typename: string; id: string };
      try {
        decoded = decodeGlobalID(globalID);
      } catch {
        throw badUserInput(`"${globalID.slice(0, 60)}" is not a global id of this API`, ['id']);
      }
      if (!NODE_TYPES.has(decoded.typename)) {
        throw badUserInput(`"${globalID.slice(0, 60)}" does not name a Wallet, Deposit or WithdrawalIntent`, [
          'id',
        ]);
      }
      return decoded;
    },
  },
  errors: { defaultTypes: [] },
});

builder.queryType({});
builder.mutationType({});
