import {
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  getNamedType,
  getOperationAST,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
  valueFromASTUntyped,
  visit,
} from 'graphql';
import { LRUCache } from 'lru-cache';
import type { ListResource } from '../loaders/loaders.ts';
import { DEFAULT_WINDOW } from '../schema/pagination.ts';
import { type RestLoad, restLoadOf, restLoadsOf } from '../schema/rest-loads.ts';

/** What one REST read counts in a document's cost (why 100: docs/schema.md#what-a-query-costs). */
export const READ_COST = 100;
/** MAX_UPSTREAM_CALLS_PER_REQUEST's default (config/variables.ts), when the caller does not say. */
export const DEFAULT_MAX_UPSTREAM_CALLS = 100;

/** The merchant lists a schema's `scan` fields read, by field coordinate (`Wallet.deposits` → `deposits`). */
const scansBySchema = new WeakMap<GraphQLSchema, ReadonlyMap<string, ListResource>>();
export function scannedLists(schema: GraphQLSchema): ReadonlyMap<string, ListResource> {
  let scans = scansBySchema.get(schema);
  if (!scans) {
    scans = new Map(
      [...restLoadsOf(schema)]
        .filter(([, load]) => load.loads === 'scan')
        .map(([coordinate, load]) => [coordinate, listOf(load)]),
    );
    scansBySchema.set(schema, scans);
  }
  return scans;
}

/** The merchant list a scan reads, named as the loaders and the wallet index name it. */
function listOf(load: RestLoad): ListResource {
  const list = SCANNED_LISTS[load.route];
  if (!list)
    throw new Error(`a scan field must read a merchant list the wallet index knows; ${load.route} is none`);
  return list;
}
const SCANNED_LISTS: Readonly<Record<string, ListResource>> = {
  'GET /deposits': 'deposits',
  'GET /withdrawal-intents': 'withdrawalIntents',
};

/**
 * The cost of an operation, known before it runs (the rules: docs/schema.md#what-a-query-costs):
 * every field 1, a *Connection's subtree `first`/`last` (or DEFAULT_WINDOW) times, the subtree of
 * `nodes(ids:)` and `_entities(representations:)` once per item; plus READ_COST per read of each
 * `loads: 'scan'` field's list and status filter: one for a window, `maxUpstreamCalls` for a walk to
 * the end (`totalCount`, or `last` without `before`) unless the list is unfiltered and its field is
 * in `indexed`; all reads together at most `maxUpstreamCalls`.
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown>,
  options: { maxUpstreamCalls?: number; indexed?: ReadonlySet<string> } = {},
): number {
  const maxUpstreamCalls = options.maxUpstreamCalls ?? DEFAULT_MAX_UPSTREAM_CALLS;
  const indexed = options.indexed ?? new Set<string>();
  const operation = getOperationAST(document, operationName);
  if (!operation) return 0;
  const values = effectiveVariables(operation, variables);
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const root = schema.getRootType(operation.operation);
  const visiting = new Set<string>();
  /** The lists scanned, by field and status filter: whether one of their selections walks all of it. */
  const scans = new Map<string, boolean>();

  const resolved = (value: ValueNode | undefined): unknown =>
    value === undefined ? undefined : valueFromASTUntyped(value, values);
  const lengthOf = (value: ValueNode | undefined): number => {
    const list = resolved(value);
    return Array.isArray(list) ? Math.max(1, list.length) : 1;
  };
  const count = (value: ValueNode | undefined): number | undefined => {
    const number = resolved(value);
    return typeof number === 'number' && number >= 0 ? number : undefined;
  };

  /** Whether `set` selects `name` at its own level, through fragments included. */
  const selects = (set: SelectionSetNode, name: string, seen = new Set<string>()): boolean =>
    set.selections.some((selection) => {
      if (selection.kind === Kind.FIELD) return selection.name.value === name;
      if (selection.kind === Kind.INLINE_FRAGMENT) return selects(selection.selectionSet, name, seen);
      const fragment = fragments.get(selection.name.value);
      if (!fragment || seen.has(selection.name.value)) return false;
      seen.add(selection.name.value);
      return selects(fragment.selectionSet, name, seen);
    });

  const costOf = (set: SelectionSetNode, type: GraphQLCompositeType): number => {
    let total = 0;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        if (name.startsWith('__')) continue;
        const field = isObjectType(type) || isInterfaceType(type) ? type.getFields()[name] : undefined;
        const fieldType = field && getNamedType(field.type);
        const argument = (n: string) => selection.arguments?.find((a) => a.name.value === n)?.value;
        if (field && restLoadOf(field)?.loads === 'scan') {
          const list = `${type.name}.${name}|${JSON.stringify(resolved(argument('status')) ?? null)}`;
          // The index answers an unfiltered list; a status filter's totalCount walks the filtered list.
          const walksAll =
            (!indexed.has(`${type.name}.${name}`) || argument('status') !== undefined) &&
            ((argument('last') !== undefined && argument('before') === undefined) ||
              (selection.selectionSet !== undefined && selects(selection.selectionSet, 'totalCount')));
          scans.set(list, (scans.get(list) ?? false) || walksAll);
        }
        let cost = 1;
        if (selection.selectionSet && fieldType && isCompositeType(fieldType)) {
          const children = costOf(selection.selectionSet, fieldType);
          const times = fieldType.name.endsWith('Connection')
            ? (count(argument('first')) ?? count(argument('last')) ?? DEFAULT_WINDOW)
            : name === 'nodes' || name === '_entities'
              ? lengthOf(argument(name === 'nodes' ? 'ids' : 'representations'))
              : 1;
          cost += times * children;
        }
        total += cost;
      } else {
        const fragment =
          selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments.get(selection.name.value);
        if (!fragment) continue;
        const key = selection.kind === Kind.FRAGMENT_SPREAD ? selection.name.value : '';
        if (key && visiting.has(key)) continue;
        if (key) visiting.add(key);
        const condition = fragment.typeCondition && schema.getType(fragment.typeCondition.name.value);
        total += costOf(fragment.selectionSet, condition && isCompositeType(condition) ? condition : type);
        if (key) visiting.delete(key);
      }
    }
    return total;
  };
  if (!root) return 0;
  const fields = costOf(operation.selectionSet, root);
  let reads = 0;
  for (const walksAll of scans.values()) reads += walksAll ? maxUpstreamCalls : 1;
  return fields + READ_COST * Math.min(reads, maxUpstreamCalls);
}

/**
 * An operation's cost for a caller (operationCost, with its merchant's indexed lists), computed once
 * per document object, operation, indexed lists and values of the counted variables (a wallet
 * screen's `$id` changes nothing). useCostLimit and the hot path (hot-path.ts) share one.
 */
export class OperationCosts {
  /** At most COSTS_KEPT small entries, whoever sends what: least recently used out, no long values. */
  private readonly known = new LRUCache<string, number>({ max: COSTS_KEPT });
  private readonly documentIds = new WeakMap<DocumentNode, number>();
  private nextDocumentId = 0;
  private readonly counted = new WeakMap<DocumentNode, readonly string[]>();
  readonly maxUpstreamCalls: number;
  private readonly walletIndexed: ((scope: string, list: ListResource) => boolean) | undefined;

  /** `walletIndexed`: whether a caller's merchant has an up-to-date index of a list (`deposits`). */
  constructor(maxUpstreamCalls: number, walletIndexed?: (scope: string, list: ListResource) => boolean) {
    this.maxUpstreamCalls = maxUpstreamCalls;
    this.walletIndexed = walletIndexed;
  }

  costOf(
    schema: GraphQLSchema,
    document: DocumentNode,
    operationName: string | null | undefined,
    variables: Record<string, unknown> | null | undefined,
    scope: string | undefined,
    allIndexed = false,
  ): number {
    const indexed = new Set<string>();
    const scans = scannedLists(schema);
    if (allIndexed) for (const field of scans.keys()) indexed.add(field);
    else if (this.walletIndexed && scope !== undefined) {
      for (const [field, list] of scans) if (this.walletIndexed(scope, list)) indexed.add(field);
    }
    const operation = getOperationAST(document, operationName);
    const effective = effectiveVariables(operation, variables);
    const values = countedValues(this.countedVariables(document), effective);
    let id = this.documentIds.get(document);
    if (id === undefined) {
      id = this.nextDocumentId++;
      this.documentIds.set(document, id);
    }
    const name = values === null ? null : `${id}|${operationName ?? ''}|${[...indexed].join(',')}|${values}`;
    const known = name === null ? undefined : this.known.get(name);
    if (known !== undefined) return known;
    const cost = operationCost(schema, document, operationName, effective, {
      maxUpstreamCalls: this.maxUpstreamCalls,
      indexed,
    });
    if (name !== null) this.known.set(name, cost);
    return cost;
  }

  /** The variables used in a document's counted arguments (COUNTED_ARGUMENTS), once per document. */
  private countedVariables(document: DocumentNode): readonly string[] {
    let names = this.counted.get(document);
    if (!names) {
      const found = new Set<string>();
      visit(document, {
        Argument(node) {
          if (!COUNTED_ARGUMENTS.has(node.name.value)) return false;
          visit(node.value, {
            Variable(variable) {
              found.add(variable.name.value);
            },
          });
          return false;
        },
      });
      names = [...found];
      this.counted.set(document, names);
    }
    return names;
  }
}

/** Costs kept, all documents together. */
const COSTS_KEPT = 10_000;
/** Counted values longer than this (as JSON) are costed every time, not kept. */
const COUNTED_VALUES_MAX_CHARS = 256;

/**
 * The variables as the operation executes with them, so a declared default is costed too: the
 * caller's own properties (`$constructor` is not Object.prototype's), and each default where the
 * caller gave none (an explicit null stays null).
 */
export function effectiveVariables(
  operation: OperationDefinitionNode | null | undefined,
  variables: Record<string, unknown> | null | undefined,
): Record<string, unknown> {
  const effective: Record<string, unknown> = Object.create(null);
  if (variables) for (const name of Object.keys(variables)) effective[name] = variables[name];
  for (const definition of operation?.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    if (definition.defaultValue && !Object.hasOwn(effective, name))
      effective[name] = valueFromASTUntyped(definition.defaultValue);
  }
  return effective;
}

/** The arguments whose values operationCost reads: page sizes, the status filter, ids and representations. */
const COUNTED_ARGUMENTS: ReadonlySet<string> = new Set(['first', 'last', 'status', 'ids', 'representations']);

/**
 * The values of `names` as text, or null (the cost then computed every time) when too long to keep
 * or not told apart as text (a number JSON has no text for would read as null).
 */
function countedValues(
  names: readonly string[],
  variables: Record<string, unknown> | null | undefined,
): string | null {
  if (names.length === 0) return '';
  try {
    const text = JSON.stringify(
      names.map((name) => (variables && Object.hasOwn(variables, name) ? variables[name] : undefined)),
      (_key, value) => {
        if (typeof value === 'number' && !Number.isFinite(value)) throw new RangeError('not a JSON number');
        return value;
      },
    );
    return text.length <= COUNTED_VALUES_MAX_CHARS ? text : null;
  } catch {
    return null;
  }
}
