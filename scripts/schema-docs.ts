/**
 * The parts of docs/schema.md printed from the schema by `npm run schema:print` (and checked by
 * `npm run schema:check` like the SDL), each between its markers: the schema at a glance, and what
 * each REST-backed field and each example operation costs upstream, from the fields' declarations
 * (src/schema/rest-loads.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import {
  type GraphQLField,
  type GraphQLSchema,
  getOperationAST,
  isInterfaceType,
  isObjectType,
  isUnionType,
  OperationTypeNode,
  parse,
} from 'graphql';
import { operationCost, READ_COST } from '../src/execution/operation-cost.ts';
import { type RestLoad, restCallsOf, restLoadsOf } from '../src/schema/rest-loads.ts';

const begin = (name: string) => `<!-- ${name}: printed by \`npm run schema:print\`; do not edit -->`;
const end = (name: string) => `<!-- /${name} -->`;

/** `page` with the section `name` replaced by `body`; throws when its markers are missing. */
export function withSection(page: string, name: string, body: string): string {
  const from = page.indexOf(begin(name));
  const to = page.indexOf(end(name));
  if (from < 0 || to < from) throw new Error(`docs/schema.md has no ${begin(name)} … ${end(name)} section`);
  return `${page.slice(0, from)}${begin(name)}\n${body}\n${page.slice(to)}`;
}

/** The root types field by field, then every other object, interface and union in one line each. */
export function glanceSection(schema: GraphQLSchema): string {
  const field = (f: GraphQLField<unknown, unknown>) =>
    f.args.length === 0 ? f.name : `${f.name}(${f.args.map((a) => a.name).join(', ')})`;
  const rootTypes = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter(
    (type) => type !== null && type !== undefined,
  );
  const rootNames = new Set(rootTypes.map((type) => type.name));
  const roots = rootTypes.flatMap((type) => [
    `type ${type.name} {`,
    ...Object.values(type.getFields()).map((f) => `  ${field(f)}: ${f.type}`),
    '}',
  ]);
  const others = Object.values(schema.getTypeMap())
    .filter((type) => !type.name.startsWith('__') && !rootNames.has(type.name))
    .flatMap((type) => {
      if (isUnionType(type)) return [`union ${type.name} = ${type.getTypes().join(' | ')}`];
      if (!isObjectType(type) && !isInterfaceType(type)) return [];
      if (/(Connection|Edge)$/.test(type.name)) return [];
      const kind = isInterfaceType(type) ? 'interface' : 'type';
      const implemented = type.getInterfaces().map((i) => i.name);
      const fields = Object.values(type.getFields()).map(field);
      return [
        `${kind} ${type.name}${implemented.length ? ` implements ${implemented.join(' & ')}` : ''} { ${fields.join(' ')} }`,
      ];
    });
  return [
    '```graphql',
    ...roots,
    ...others,
    '# Each *Connection: edges { cursor node } nodes pageInfo totalCount',
    '```',
  ].join('\n');
}

const LOADS: Record<RestLoad['loads'], string> = {
  batch: 'batched: one list read for every instance in the request',
  byId: 'one call per distinct id (or parent) in the request',
  page: 'one call per REST page of its window',
  scan: "the wallet's share of the merchant's list (no wallet filter)",
  write: 'one call, at most once per idempotency key',
  poll: 'polled in the background, once per watched feed',
};

function counted(load: RestLoad): string {
  if (load.loads === 'scan')
    return `its fields, plus ${READ_COST} per read: one for a window, the call budget for a walk to the list's end`;
  if (load.loads === 'poll') return 'at subscribe, its fields';
  return 'its fields';
}

export function restLoadsSection(schema: GraphQLSchema, operations: URL): string {
  const fields = [...restLoadsOf(schema)].map(
    ([coordinate, load]) =>
      `| \`${coordinate}\` | \`${load.route}\`${load.batched ? ` (several: \`${load.batched}\`)` : ''} | ${LOADS[load.loads]} | ${load.calls} | ${counted(load)} |`,
  );
  const screens = readdirSync(operations)
    .filter((file) => file.endsWith('.graphql'))
    .sort()
    .flatMap((file) => {
      const document = parse(readFileSync(new URL(file, operations), 'utf8'));
      if (getOperationAST(document)?.operation === OperationTypeNode.SUBSCRIPTION) return [];
      return [
        `| \`${file}\` | ${restCallsOf(schema, document)} | ${operationCost(schema, document, undefined, {})} |`,
      ];
    });
  return [
    '| Field | REST route (below `/external/v1`) | How it loads | Calls alone | The cost limit counts |',
    '|---|---|---|---|---|',
    ...fields,
    '',
    '| Example operation (`schema/operations`) | REST calls on a short list | Cost, without a wallet index |',
    '|---|---|---|',
    ...screens,
  ].join('\n');
}

/** docs/schema.md as printed from `schema`. */
export function schemaPage(page: string, schema: GraphQLSchema, operations: URL): string {
  return withSection(
    withSection(page, 'glance', glanceSection(schema)),
    'rest-loads',
    restLoadsSection(schema, operations),
  );
}
