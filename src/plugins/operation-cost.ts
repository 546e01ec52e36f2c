import {
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
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
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { GatewayContext } from '../context.ts';
import { type ErrorCode, requestError } from '../errors/error-codes.ts';
import { LIST_SCAN_FIELDS } from '../schema/connections.ts';
import { DEFAULT_WINDOW } from '../schema/pagination.ts';
import type { Caller } from '../upstream/caller.ts';

/**
 * What one REST read counts in a document's cost: 100, so that a request that may spend the
 * whole default call budget (100 reads) counts 10 000, half the default cost limit. Then the
 * largest realistic screen (20 wallets with their deposits' and withdrawals' totalCount and a
 * feed) passes, and lowering QUERY_MAX_COST below ~10 000 refuses every document that walks a
 * merchant's whole list.
 */
export const READ_COST = 100;
/** MAX_UPSTREAM_CALLS_PER_REQUEST's default (config.ts), when the caller does not say. */
export const DEFAULT_MAX_UPSTREAM_CALLS = 100;

/**
 * Executions of one key's documents that walk a whole list (cost at least READ_COST × the call
 * budget) at once; the key's further ones wait for one of them to end. Identical walks in flight
 * share their REST calls (coalescing), so the transport's per-key share (fair-share.ts) does not
 * bound them; their cost is the gateway's own work on every page, once per request.
 */
export const WALKS_PER_KEY = 2;

const CODE = 'QUERY_LIMIT_EXCEEDED' satisfies ErrorCode;

/**
 * The cost of an operation, known before it runs:
 *
 * - its fields: every field costs 1; the subtree of a field returning a *Connection type counts
 *   `first`/`last` (or the default window) times, so `deposits(first: 1000) { nodes { wallet {
 *   deposits(first: 1000) … } } }` is refused while real screens pass; the subtree of
 *   `nodes(ids:)` and of a router's `_entities(representations:)` counts once per id or
 *   representation;
 * - plus READ_COST for each REST read it may make over a wallet's list (LIST_SCAN_FIELDS): the
 *   REST API has no wallet filter, so such a connection scans the merchant's list, once per list
 *   and status filter per request whatever the number of wallets. A scan for a window counts one
 *   read (its first page usually holds it); a scan that walks the whole list (`totalCount`
 *   selected, or `last` without `before`) counts `maxUpstreamCalls` reads, the most it may make
 *   (the list's length is not known before the walk). All such reads together count at most
 *   `maxUpstreamCalls`: the request makes no more.
 *
 * Other connections' reads (one or two pages each) are not counted beyond their fields.
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
        if (LIST_SCAN_FIELDS.has(`${type.name}.${name}`)) {
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
          // A connection's window, the ids of nodes(ids:), a router's representations: each item
          // costs what it selects.
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
 * Rejects an operation whose cost exceeds `maxCost` before it executes (variables are known only
 * then); operationCost says how it is counted. An operation that walks a whole list (costs at
 * least READ_COST × `maxUpstreamCalls`) then waits until fewer than `walksPerKey` of its merchant's
 * walks execute (its key's, while its merchant is not known: `groupOf`, merchants.ts), FIFO, at most until its request's deadline (then RATE_LIMITED, nothing run).
 */
/**
 * An operation's cost for a caller (operationCost), with the caller's indexed lists counted as
 * such. The document cache hands out the same document object for the same text, and a cost
 * depends on the document, the indexed lists and the values of the few variables operationCost
 * reads: each such cost is computed once (the many-merchant mix computed it for every wallet
 * screen, whose $id changes it not at all).
 * useCostLimit and the hot path (src/execution/hot-path.ts) share one.
 */
export class OperationCosts {
  /**
   * Costs by document (a number per document object), operation, indexed lists and counted
   * values; one bound for all documents, least recently used first out, and only short values
   * (a few hundred characters): a caller cannot make it hold more than COSTS_KEPT small entries.
   */
  private readonly known = new LRUCache<string, number>({ max: COSTS_KEPT });
  private readonly documentIds = new WeakMap<DocumentNode, number>();
  private nextDocumentId = 0;
  private readonly counted = new WeakMap<DocumentNode, readonly string[]>();
  readonly maxUpstreamCalls: number;
  private readonly walletIndexed: ((scope: string, field: string) => boolean) | undefined;

  constructor(maxUpstreamCalls: number, walletIndexed?: (scope: string, field: string) => boolean) {
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
    if (allIndexed) for (const field of LIST_SCAN_FIELDS) indexed.add(field);
    else if (this.walletIndexed && scope !== undefined) {
      for (const field of LIST_SCAN_FIELDS) if (this.walletIndexed(scope, field)) indexed.add(field);
    }
    const operation = getOperationAST(document, operationName);
    const effective = effectiveVariables(operation, variables);
    // The cost depends on the document, on which of the caller's lists are indexed, and on the
    // values of the variables its counted arguments use (a wallet's $id is not one of them).
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
 * The variables as the operation executes with them: the caller's own values (own properties
 * only: `$constructor` is not Object.prototype's), and each declared default where the caller
 * gave none (an explicit null stays null). Costing the raw variables let `$n: Int = 1000` run
 * unbounded: the executors apply the default, the cost did not see it.
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

/** The arguments whose values operationCost reads: page sizes, the status filter, and the lists of ids and representations. */
const COUNTED_ARGUMENTS: ReadonlySet<string> = new Set(['first', 'last', 'status', 'ids', 'representations']);

/**
 * The values of `names` as text, or null when they cannot be told apart as text (a number JSON has
 * no text for would read as null) or are too long to keep: such a cost is computed every time.
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

/** Whose walk slots a caller takes, and how its merchant is learnt before its cost counts (merchants.ts). */
export interface CostMerchants {
  groupOf: (scope: string) => string;
  learn?: {
    known: (scope: string) => boolean;
    merchantOf: (caller: Caller) => Promise<void>;
  };
}

export function useCostLimit(
  maxCost: number,
  costs: OperationCosts,
  walksPerKey: number,
  merchants: CostMerchants = { groupOf: (scope) => scope },
): Plugin {
  const { groupOf, learn } = merchants;
  const { maxUpstreamCalls } = costs;
  const costOf = (args: ExecutionArgs, allIndexed = false): number =>
    costs.costOf(
      args.schema,
      args.document,
      args.operationName,
      args.variableValues as Record<string, unknown> | undefined,
      (args.contextValue as Partial<GatewayContext> | undefined)?.caller?.scope,
      allIndexed,
    );
  const walks = new KeyedSlots(walksPerKey);
  const walkCost = READ_COST * maxUpstreamCalls;
  type Hook = { args: ExecutionArgs; setResultAndStopExecution(result: ExecutionResult): void };
  /** The cost, or null once the operation is refused for it. */
  const check = ({ args, setResultAndStopExecution }: Hook): number | null => {
    const cost = costOf(args);
    if (cost <= maxCost) return cost;
    const error = requestError(
      CODE,
      `The operation's cost ${cost} exceeds the limit of ${maxCost}: ask for fewer items per connection, nest fewer connections, or select totalCount (or \`last\` without \`before\`) on a wallet's deposits or withdrawal intents less often: until the merchant's wallet index is built in the background, each reads the merchant's whole list.`,
      { extensions: { cost, maxCost } },
    );
    setResultAndStopExecution({ data: null, errors: [error] });
    return null;
  };
  /**
   * A whole-list walk waits for one of its key's slots (see useCostLimit). Anything else passes
   * synchronously: a hook that returns a promise delays every plugin after it by a tick, and
   * query deduplication joins identical requests only when they reach it in the same tick.
   */
  const waitForWalk = (hook: Hook) => {
    const context = hook.args.contextValue as Partial<GatewayContext> | undefined;
    // A new key's cost is counted with its merchant's indexes once the merchant is known: one
    // read of its wallets first, only when the cost counted without them would refuse or queue
    // it and the cost counted with every list indexed would not. A document refused either way
    // is refused before any REST call.
    const caller = context?.caller;
    if (learn && caller && context.authorization && !learn.known(caller.scope)) {
      const cost = costOf(hook.args);
      const indexedCost = costOf(hook.args, true);
      if ((cost > maxCost && indexedCost <= maxCost) || (cost >= walkCost && indexedCost < walkCost))
        return learn.merchantOf(caller).then(() => admit(hook));
    }
    return admit(hook);
  };
  const admit = (hook: Hook) => {
    const cost = check(hook);
    const context = hook.args.contextValue as Partial<GatewayContext> | undefined;
    if (cost === null || cost < walkCost || walksPerKey <= 0) return;
    if (!context?.authorization || !context.caller) return;
    const entered = walks.enter(groupOf(context.caller.scope), context.caller.deadline);
    const settle = (release: (() => void) | null) => {
      if (!release) {
        const error = requestError(
          'RATE_LIMITED',
          `This merchant's keys had ${walksPerKey} operations reading its whole list running until this request's deadline; retry when they are done, or select totalCount less often.`,
          { extensions: { retryAfterSeconds: 1, walksPerKey } },
        );
        hook.setResultAndStopExecution({ data: null, errors: [error] });
        return;
      }
      return {
        onExecuteDone({ result }: { result: unknown }) {
          if (!isAsyncIterable(result)) {
            release();
            return;
          }
          return { onEnd: release };
        },
      };
    };
    return entered instanceof Promise ? entered.then(settle) : settle(entered);
  };
  return {
    onExecute: waitForWalk,
    // A subscription's events are polled reads of one item each, paced by the poller.
    onSubscribe: (hook) => void check(hook),
  };
}

/**
 * At most `perKey` holders per key at once; the others wait in the key's FIFO queue. A slot is
 * given back by its release function, or at the holder's deadline at the latest (an execution
 * that failed before its end was reported cannot keep a key's slot).
 */
class KeyedSlots {
  private readonly keys = new Map<string, { holders: number; waiting: (() => void)[] }>();
  private readonly perKey: number;

  constructor(perKey: number) {
    this.perKey = perKey;
  }

  /** A release function once `key` has a free slot, or null when `deadline` passes first. */
  enter(key: string, deadline: number | undefined): Promise<(() => void) | null> | (() => void) | null {
    let entry = this.keys.get(key);
    if (!entry) {
      entry = { holders: 0, waiting: [] };
      this.keys.set(key, entry);
    }
    if (entry.holders < this.perKey) {
      entry.holders++;
      return this.releaser(key, deadline);
    }
    const queue = entry.waiting;
    return new Promise((resolve) => {
      const timer =
        deadline === undefined
          ? undefined
          : setTimeout(
              () => {
                queue.splice(queue.indexOf(go), 1);
                resolve(null);
              },
              Math.max(0, deadline - Date.now()),
            );
      const go = () => {
        clearTimeout(timer);
        resolve(this.releaser(key, deadline));
      };
      queue.push(go);
    });
  }

  /** Gives the slot back once: to the oldest waiting holder, else frees it. */
  private releaser(key: string, deadline: number | undefined): () => void {
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      clearTimeout(backstop);
      const entry = this.keys.get(key);
      if (!entry) return;
      const next = entry.waiting.shift();
      if (next) {
        next();
        return;
      }
      entry.holders--;
      if (entry.holders <= 0) this.keys.delete(key);
    };
    const backstop =
      deadline === undefined ? undefined : setTimeout(release, Math.max(0, deadline - Date.now()));
    backstop?.unref();
    return release;
  }
}
