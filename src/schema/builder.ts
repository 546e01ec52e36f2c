import SchemaBuilder from '@pothos/core';
import DirectivesPlugin from '@pothos/plugin-directives';
import ErrorsPlugin from '@pothos/plugin-errors';
import FederationPlugin from '@pothos/plugin-federation';
import RelayPlugin from '@pothos/plugin-relay';
import type { GatewayContext } from '../context.ts';
import { quoted } from '../errors/echoes.ts';
import { badUserInput } from '../errors/errors.ts';
import { decodedGlobalId, isRestId, NODE_TYPES } from './global-ids.ts';
import { INPUT_LIMITS } from './input-limits.ts';
import { restLoad } from './rest-loads.ts';

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
  // Federation last: it wraps what the others built (schema/federation.ts).
  plugins: [ErrorsPlugin, RelayPlugin, DirectivesPlugin, FederationPlugin],
  relay: {
    nodesOnConnection: {
      description:
        'The items of this page, in order: `edges` without the cursors, for screens that need none.',
    },
    edgesFieldOptions: {
      nullable: false,
      description: 'The items of this page with their cursors, in order.',
    },
    nodeFieldOptions: { nullable: false, description: 'The item.' },
    cursorFieldOptions: {
      description:
        'Opaque; pass it as `after` or `before` to page from this item. Valid for this list and filter only.',
    },
    pageInfoFieldOptions: { description: 'Where this page sits in the whole list.' },
    nodeTypeOptions: {
      description:
        'An object with a global id: Wallet, Deposit or WithdrawalIntent. Fetch any of them again with `node(id:)`.',
    },
    pageInfoTypeOptions: {
      description: 'Where a page sits in its list (Relay cursor connections).',
      // In a supergraph, other Relay subgraphs define the same PageInfo (schema/federation.ts).
      directives: { shareable: {} },
    },
    hasNextPageFieldOptions: { description: 'Whether items follow this page.' },
    hasPreviousPageFieldOptions: { description: 'Whether items precede this page.' },
    startCursorFieldOptions: { description: "The first item's cursor; null on an empty page." },
    endCursorFieldOptions: { description: "The last item's cursor; null on an empty page." },
    firstArgOptions: {
      description:
        "How many items after `after` (or from the newest): 0 to 1000, the REST API's largest page; 20 when neither first nor last is given. Counts toward the cost limit.",
    },
    lastArgOptions: { description: 'How many items before `before` (or up to the oldest): 0 to 1000.' },
    afterArgOptions: { description: 'A cursor of this list: the page starts after that item.' },
    beforeArgOptions: { description: 'A cursor of this list: the page ends before that item.' },
    nodeQueryOptions: {
      description:
        'A Wallet, Deposit or WithdrawalIntent by its global id; null when it does not exist for this merchant.',
      args: { id: { description: 'A global id, as the `id` field of a Node returns it.' } },
      extensions: restLoad({
        route: 'GET /{wallets,deposits,withdrawal-intents}/{id}',
        loads: 'byId',
        calls: 1,
      }),
    },
    nodesQueryOptions: {
      description:
        'Several nodes by global id, in the order asked; null for each one that does not exist for this merchant.',
      args: { ids: { description: 'Global ids, as the `id` field of a Node returns them.' } },
      extensions: restLoad({
        route: 'GET /{wallets,deposits,withdrawal-intents}/{id}',
        loads: 'byId',
        calls: 1,
      }),
    },
    idFieldOptions: {
      description: 'Global id (Relay): the type and the REST id, opaque. Use it with `node(id:)`.',
    },
    // node(id:) and nodes(ids:): by length before decoding, then the type and the REST id.
    decodeGlobalID: (globalID: string) => {
      if (globalID.length > INPUT_LIMITS.id) {
        throw badUserInput(`id must be at most ${INPUT_LIMITS.id} characters; received ${globalID.length}`, [
          'id',
        ]);
      }
      const decoded = decodedGlobalId(globalID);
      if (!decoded) throw badUserInput(`${quoted(globalID)} is not a global id of this API`, ['id']);
      if (!NODE_TYPES.has(decoded.typename)) {
        throw badUserInput(`${quoted(globalID)} does not name a Wallet, Deposit or WithdrawalIntent`, ['id']);
      }
      if (!isRestId(decoded.id))
        throw badUserInput(`${quoted(globalID)} is not a global id of this API`, ['id']);
      return decoded;
    },
  },
  errors: { defaultTypes: [] },
});

builder.queryType({
  description:
    "What the caller's API key may read: its merchant's wallets, deposits and withdrawal intents. Every field needs `Authorization: Bearer <API key>`.",
});
builder.mutationType({ description: 'What changes money: creating a withdrawal intent.' });
builder.subscriptionType({
  description:
    'Live withdrawal status, over GraphQL over SSE (POST /graphql with Accept: text/event-stream) or WebSocket (graphql-ws at /graphql). The REST API has no events: the gateway polls it for you, once per watched intent however many clients watch.',
});
