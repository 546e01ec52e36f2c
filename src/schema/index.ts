import { printSubgraphSchema } from '@apollo/subgraph';
import { GraphQLDeferDirective, GraphQLStreamDirective } from '@graphql-tools/utils';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { type GraphQLObjectType, GraphQLSchema, lexicographicSortSchema } from 'graphql';
import { quoted } from '../errors/echoes.ts';
import { badUserInput } from '../errors/errors.ts';
import { builder } from './builder.ts';
import { NODE_TYPES } from './global-ids.ts';
import './scalars.ts';
import './enums.ts';
import './types/transaction.ts';
import './types/wallet.ts';
import './types/deposit.ts';
import './types/withdrawal-intent.ts';
import './federation.ts';

/**
 * The gateway's schema, built once per process, sorted like the checked-in SDL, and declaring the
 * @defer and @stream that useIncrementalDelivery executes, so clients' generated types know them.
 */
export const schema = withoutDirectives(finished(builder.toSchema()));

/** The same schema as a Federation v2 subgraph (FEDERATION=true; docs/supergraph.md, federation.ts). */
export const subgraphSchema = asSubgraph(
  finished(
    builder.toSubGraphSchema({
      linkUrl: 'https://specs.apollo.dev/federation/v2.6',
      federationDirectives: ['@key', '@shareable'],
    }),
  ),
);

/** Without the federation directives the builder recorded (@key, @shareable): schema/schema.graphql. */
function withoutDirectives(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    const extensions = type.extensions as Record<string, unknown>;
    if (!extensions.directives && !type.astNode?.directives?.length) continue;
    const { directives: _dropped, ...rest } = extensions;
    Object.assign(type, {
      extensions: rest,
      ...(type.astNode && { astNode: { ...type.astNode, directives: [] } }),
    });
  }
  return schema;
}

/**
 * `_service { sdl }` answers this schema as served (with @defer and @stream: schema/subgraph.graphql);
 * `_entities` answers a representation naming none of this subgraph's entity types with null and
 * BAD_USER_INPUT for that item alone (the plugin's resolver failed the whole batch).
 */
function asSubgraph(schema: GraphQLSchema): GraphQLSchema {
  const fields = (schema.getQueryType() as GraphQLObjectType).getFields();
  const service = fields._service;
  const entities = fields._entities;
  if (!service || !entities?.resolve) throw new Error('the subgraph schema has no _service or _entities');
  const sdl = printSubgraphSchema(schema);
  service.resolve = () => ({ sdl });
  const resolveEntities = entities.resolve;
  entities.resolve = async (source, args, context, info) => {
    const representations = (args as { representations: unknown[] }).representations;
    const valid: unknown[] = [];
    const answers: unknown[] = representations.map((representation, i) => {
      const typename = (representation as { __typename?: unknown } | null)?.__typename;
      if (
        typeof representation === 'object' &&
        representation !== null &&
        !Array.isArray(representation) &&
        typeof typename === 'string' &&
        NODE_TYPES.has(typename)
      ) {
        valid.push(representation);
        return i;
      }
      return badUserInput(
        `representations[${i}] must be an object whose __typename is Wallet, Deposit or WithdrawalIntent; received ${typeof typename === 'string' ? quoted(typename) : typeof representation}`,
        ['representations', String(i)],
      );
    });
    const resolved = (await resolveEntities(
      source,
      { ...(args as object), representations: valid },
      context,
      info,
    )) as unknown[];
    let next = 0;
    return answers.map((answer) => (typeof answer === 'number' ? resolved[next++] : answer));
  };
  return schema;
}

function finished(built: GraphQLSchema): GraphQLSchema {
  const schema = lexicographicSortSchema(
    new GraphQLSchema({
      ...built.toConfig(),
      directives: [...built.getDirectives(), GraphQLDeferDirective, GraphQLStreamDirective],
    }),
  );

  // The relay plugin resolves every `id` through a promise; the same global id, encoded here
  // synchronously, spares one per node (node-ids.test.ts compares it with the plugin's default
  // encoder: should builder.ts set `encodeGlobalID`, use that one here).
  for (const typename of NODE_TYPES) {
    const id = (schema.getType(typename) as GraphQLObjectType).getFields().id;
    if (!id) throw new Error(`node type ${typename} has no id field`);
    id.resolve = (node: { id: string }) => encodeGlobalID(typename, node.id);
  }

  // A wallet list's hasNextPage may be a promise (wallet-connections.ts), and compiled execution awaits
  // only what a resolver returns: so it resolves explicitly.
  const hasNextPage = (schema.getType('PageInfo') as GraphQLObjectType).getFields().hasNextPage;
  if (!hasNextPage) throw new Error('PageInfo has no hasNextPage field');
  hasNextPage.resolve = (page: { hasNextPage: boolean | Promise<boolean> }) => page.hasNextPage;
  return schema;
}
