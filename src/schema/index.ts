import { GraphQLDeferDirective, GraphQLStreamDirective } from '@graphql-tools/utils';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { type GraphQLObjectType, GraphQLSchema, lexicographicSortSchema } from 'graphql';
import { NODE_TYPES } from '../global-ids.ts';
import { builder } from './builder.ts';
import './scalars.ts';
import './enums.ts';
import './types/transaction.ts';
import './types/wallet.ts';
import './types/deposit.ts';
import './types/withdrawal-intent.ts';
import './federation.ts';

/**
 * The gateway's schema, built once per process and sorted like the checked-in SDL, with the
 * @defer and @stream directives that useIncrementalDelivery (plugins/defer-stream.ts) executes, so that the SDL clients generate
 * their types from declares them too.
 */
export const schema = finished(builder.toSchema());

/**
 * The same schema as a Federation v2 subgraph (FEDERATION=true; docs/supergraph.md): its types'
 * @key directives, `_service { sdl }` and `_entities(representations:)` (schema/federation.ts).
 */
export const subgraphSchema = finished(
  builder.toSubGraphSchema({
    linkUrl: 'https://specs.apollo.dev/federation/v2.6',
    federationDirectives: ['@key', '@shareable'],
  }),
);

function finished(built: GraphQLSchema): GraphQLSchema {
  const schema = lexicographicSortSchema(
    new GraphQLSchema({
      ...built.toConfig(),
      directives: [...built.getDirectives(), GraphQLDeferDirective, GraphQLStreamDirective],
    }),
  );

  // The relay plugin resolves every node's `id` asynchronously (it allows async id resolvers), so a
  // list of 50 deposits completed 50 promises for ids it already had. Ours are the DTO's own id:
  // the same global id, encoded synchronously, lets a list of nodes complete without a promise each.
  // builder.ts leaves the relay plugin's encoder at its default; should it ever set `encodeGlobalID`,
  // use that one here too (test/unit/node-ids.test.ts compares against the default).
  for (const typename of NODE_TYPES) {
    const id = (schema.getType(typename) as GraphQLObjectType).getFields().id;
    if (!id) throw new Error(`node type ${typename} has no id field`);
    id.resolve = (node: { id: string }) => encodeGlobalID(typename, node.id);
  }

  // A wallet's deposits and withdrawals page through a scan of the merchant's whole list, and their
  // hasNextPage reads one item past the page only when selected: a promise (connections.ts). Every
  // other field without a resolver holds a plain value; this one resolves explicitly, since compiled
  // execution (plugins/compiled-execution.ts) awaits only what a resolver returns.
  const hasNextPage = (schema.getType('PageInfo') as GraphQLObjectType).getFields().hasNextPage;
  if (!hasNextPage) throw new Error('PageInfo has no hasNextPage field');
  hasNextPage.resolve = (page: { hasNextPage: boolean | Promise<boolean> }) => page.hasNextPage;
  return schema;
}
