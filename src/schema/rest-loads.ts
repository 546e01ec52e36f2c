import {
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  getNamedType,
  getOperationAST,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  Kind,
  type SelectionSetNode,
  valueFromASTUntyped,
} from 'graphql';
import { DEFAULT_WINDOW } from './pagination.ts';

/**
 * What a REST-backed field costs upstream and how it loads, declared on the field itself
 * (`extensions: restLoad({ … })`). The cost limit (execution/operation-cost.ts), docs/schema.md's
 * table of fields and screens (printed by `npm run schema:print`) and the test that measures each
 * field's REST calls (test/integration/gateway/rest-loads.test.ts) all read this declaration; a
 * field that makes a REST call without one fails that test. docs/schema.md#what-a-field-costs-upstream
 * says what each kind means for a screen.
 */
export interface RestLoad {
  /** The REST route it reads or writes, below the base path /external/v1: `GET /deposits`. */
  route: string;
  /** The route several instances of the field in one request share instead, if another. */
  batched?: string;
  /**
   * How its calls are shared within one request:
   * - `batch`: every instance of the field in the request shares one read of a whole list (the
   *   wallet list answers every wallet a page of deposits names);
   * - `byId`: one call per distinct id in the request (DataLoader), several wallets by the wallet list;
   * - `page`: one call per REST page of its window (a window within 1000 items is one page, two
   *   when a cursor's place straddles pages), identical pages shared;
   * - `scan`: a wallet's share of the merchant's list, which the REST API cannot filter by wallet:
   *   once per list and status filter per request, read where the wallet index says (the fewest
   *   small pages), else walked from the cursor's place; `totalCount` or `last` without `before`
   *   walks to the list's end, up to the request's call budget. The cost limit counts these reads.
   * - `write`: one call per request (createWithdrawalIntent), at most once per idempotency key;
   * - `poll`: a subscription, polled in the background once per watched feed, whoever watches.
   */
  loads: 'batch' | 'byId' | 'page' | 'scan' | 'write' | 'poll';
  /**
   * The REST calls the field adds to a request when it is asked alone with its smallest selection
   * on a short list (the test measures it against the sandbox). 0 for `poll`: none at subscribe.
   */
  calls: number;
}

/** The field option that declares a REST-backed field: `extensions: restLoad({ … })`. */
export function restLoad(load: RestLoad): { restLoad: RestLoad } {
  return { restLoad: Object.freeze({ ...load }) };
}

/** A field's declaration, or undefined for a field read from its parent's REST answer. */
export function restLoadOf(field: GraphQLField<unknown, unknown>): RestLoad | undefined {
  return (field.extensions as { restLoad?: RestLoad } | undefined)?.restLoad;
}

/** Every declared field of a schema, as `Type.field` → its declaration, in schema order. */
export function restLoadsOf(schema: GraphQLSchema): Map<string, RestLoad> {
  const loads = new Map<string, RestLoad>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__') || !(isObjectType(type) || isInterfaceType(type))) continue;
    for (const field of Object.values(type.getFields())) {
      const load = restLoadOf(field);
      if (load) loads.set(`${type.name}.${field.name}`, load);
    }
  }
  return loads;
}

/**
 * The REST calls a document makes on a short list (every window within the first page, every
 * wallet among the merchant's first 1000), as its fields declare them: each declared field once per
 * distinct call it shares (a batch per route, a by-id root field per id, a page or scan per field
 * and arguments), a by-id field below a list once per item of its window (an upper bound), each
 * write once per occurrence, polls none. What docs/schema.md's table of screens shows;
 * test/integration/gateway/rest-loads.test.ts measures each example operation against it.
 */
export function restCallsOf(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> = {},
): number {
  const operation = getOperationAST(document);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return 0;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const calls = new Map<string, number>();
  let writes = 0;
  /** `items`: how many parents this selection is asked for (the windows of the lists above it). */
  const visit = (set: SelectionSetNode, type: GraphQLCompositeType, items: number, path: string): void => {
    for (const selection of set.selections) {
      if (selection.kind !== Kind.FIELD) {
        const fragment =
          selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments.get(selection.name.value);
        if (!fragment) continue;
        const condition = fragment.typeCondition && schema.getType(fragment.typeCondition.name.value);
        visit(fragment.selectionSet, condition && isCompositeType(condition) ? condition : type, items, path);
        continue;
      }
      const field =
        isObjectType(type) || isInterfaceType(type) ? type.getFields()[selection.name.value] : undefined;
      if (!field) continue;
      const load = restLoadOf(field);
      const args = Object.fromEntries(
        (selection.arguments ?? []).map((a) => [a.name.value, valueFromASTUntyped(a.value, variables)]),
      );
      const coordinate = `${type.name}.${field.name}`;
      if (load?.loads === 'write') writes += load.calls;
      else if (load?.loads === 'batch') calls.set(`batch ${load.batched ?? load.route}`, load.calls);
      else if (load?.loads === 'byId' && Array.isArray(args.ids))
        for (const id of args.ids) calls.set(`byId ${coordinate} ${JSON.stringify(id)}`, load.calls);
      else if (load?.loads === 'byId' && 'id' in args)
        calls.set(`byId ${coordinate} ${JSON.stringify(args.id)}`, load.calls);
      else if (load?.loads === 'byId') calls.set(`byId ${coordinate} below ${path}`, load.calls * items);
      else if (load?.loads === 'scan')
        calls.set(`scan ${coordinate} ${JSON.stringify(args.status)}`, load.calls);
      else if (load?.loads === 'page') calls.set(`page ${coordinate} ${JSON.stringify(args)}`, load.calls);
      const named = getNamedType(field.type);
      const window = named.name.endsWith('Connection')
        ? Number(args.first ?? args.last ?? DEFAULT_WINDOW)
        : 1;
      if (selection.selectionSet && isCompositeType(named))
        visit(
          selection.selectionSet,
          named,
          items * window,
          `${path}.${selection.alias?.value ?? field.name}`,
        );
    }
  };
  visit(operation.selectionSet, root, 1, '');
  return writes + [...calls.values()].reduce((sum, n) => sum + n, 0);
}
