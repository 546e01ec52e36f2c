import {
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  GraphQLError,
  getOperationAST,
  Kind,
  type SelectionSetNode,
  type Source,
  visit,
} from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { GatewayContext } from '../context.ts';
import { nonNullRootFields } from '../execution/root-fields.ts';

type Execute = (args: ExecutionArgs) => unknown;

/** Executions of a document on the usual executor before it is compiled. */
export const COMPILE_AFTER_USES = 10;

/**
 * The most fields (fragments expanded) a compiled document may have: the largest example screen
 * has 26. Compile times against field counts:
 * docs/benchmark.md#how-compiled-execution-is-kept-exact-and-safe.
 */
export const MAX_COMPILED_FIELDS = 200;

/**
 * Runs queries as code compiled once per document by graphql-jit, instead of interpreting the
 * document field by field on every request (docs/benchmark.md#each-change-with-its-measured-effect).
 * What comes out is what the usual executor answers, by these rules
 * (test/integration/gateway/differential.property.test.ts checks them on generated documents):
 *
 * - Only documents whose shape graphql-jit 0.8 answers exactly are compiled (`uncompilable`,
 *   `nonNullRootField`): queries without @skip, @include, @defer or @stream, and without a
 *   non-null root field (`nodes`). Mutations,
 *   subscriptions and everything else run on the usual executor, as does anything graphql-jit
 *   cannot compile.
 * - A request error (no `data`: the variables could not be coerced) is answered by the usual
 *   executor, which coerces them again and words its errors as graphql-js does (custom scalars'
 *   own messages, codes, echo limits). Nothing has been resolved at that point, so nothing runs twice.
 * - A field error becomes a graphql-js GraphQLError with its source positions, so its `locations`
 *   survive Yoga's handling (which rebuilds errors from their nodes or positions), and its
 *   original error and extensions are kept.
 * - graphql-jit reads a field without a resolver as a plain property: it neither calls a function
 *   nor awaits a promise found there, as graphql-js's default resolver does: such a field needs a
 *   resolver of its own (src/schema/index.ts gives PageInfo.hasNextPage one). The integration test
 *   test/integration/gateway/compiled-execution.test.ts answers every example operation both ways.
 *
 * A document is compiled on its COMPILE_AFTER_USES-th execution, not its first: compiling costs
 * a few requests' worth of CPU (docs/benchmark.md), so a flood of one-off documents (anyone may
 * send them unless trusted documents are on) must not pay it; an app's documents run thousands of
 * times.
 *
 * Compiled queries are kept per parsed document (Yoga's parser cache hands out the same one for
 * the same text) and operation name, in a WeakMap: they go when the document leaves that cache.
 * Must come after every plugin that replaces the executor itself and before query deduplication,
 * which wraps whatever executor is set.
 */
export function useCompiledExecution(options: {
  logger: Logger;
  /** Whether this request's caller may have a document compiled: a key the REST API accepted lately. */
  mayCompile: (context: GatewayContext) => boolean;
  /** Where compiled queries are kept; the hot path (src/execution/hot-path.ts) reads the same. */
  compiled?: CompiledQueries;
}): Plugin {
  const { logger } = options;
  const compiled = options.compiled ?? new CompiledQueries();
  const compiledFor = (args: ExecutionArgs): CompiledQuery | null => {
    const entry = compiled.entryOf(args.document, args.operationName);
    if (entry.query !== undefined) return entry.query;
    if (++entry.uses < COMPILE_AFTER_USES) return null;
    // Only for a key the REST API has accepted: a made-up key never makes the gateway compile.
    if (!options.mayCompile(args.contextValue as GatewayContext)) return null;
    const outcome = compile(args);
    entry.query = 'query' in outcome ? outcome.query : null;
    // Once per document and operation, not per request.
    logger.debug(
      {
        operationName: getOperationAST(args.document, args.operationName)?.name?.value ?? null,
        compiled: entry.query !== null,
        ...('why' in outcome && { why: outcome.why }),
      },
      entry.query ? 'operation compiled' : 'operation runs on the usual executor',
    );
    return entry.query;
  };
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const query = compiledFor(args);
      if (!query) return;
      const usual = executeFn as Execute;
      setExecuteFn(((executionArgs: ExecutionArgs) => {
        const result = query.query(
          executionArgs.rootValue,
          executionArgs.contextValue,
          executionArgs.variableValues ?? {},
        );
        return isPromise(result)
          ? result.then((settled) => finish(settled, executionArgs, usual))
          : finish(result, executionArgs, usual);
      }) as typeof executeFn);
    },
  };
}

/**
 * Compiled queries per parsed document and operation name, in a WeakMap: they go when the
 * document leaves the document cache. `uses` counts executions before compiling; `query` is the
 * compiled query, null when the document runs on the usual executor, undefined until decided.
 */
export class CompiledQueries {
  private readonly seen = new WeakMap<
    DocumentNode,
    Map<string, { uses: number; query?: CompiledQuery | null }>
  >();

  entryOf(document: DocumentNode, operationName: string | null | undefined) {
    let byName = this.seen.get(document);
    if (!byName) {
      byName = new Map();
      this.seen.set(document, byName);
    }
    const name = operationName ?? '';
    let entry = byName.get(name);
    if (!entry) {
      entry = { uses: 0 };
      byName.set(name, entry);
    }
    return entry;
  }

  /** The compiled query of a document and operation, once one is; never compiles. */
  find(document: DocumentNode, operationName: string | null | undefined): CompiledQuery | undefined {
    return this.seen.get(document)?.get(operationName ?? '')?.query ?? undefined;
  }
}

function compile(args: ExecutionArgs): { query: CompiledQuery } | { why: string } {
  const operation = getOperationAST(args.document, args.operationName);
  if (!operation) return { why: 'no single operation' };
  // Mutations: after a non-null root field fails, graphql-jit still runs the fields after it (the
  // usual executor stops; here a later createWithdrawalIntent would move money), and a mutation's
  // time is its POST, which compiling does not shorten.
  if (operation.operation !== 'query') return { why: operation.operation };
  const refused = uncompilable(args.document) ?? nonNullRootField(args);
  if (refused) return { why: refused };
  const compiled = compileQuery(args.schema, args.document, args.operationName ?? undefined, {
    // The gateway's errors carry their cause for the logs; a stack per field error is not needed.
    disablingCapturingStackErrors: true,
  });
  if (isCompiledQuery(compiled)) return { query: compiled };
  return { why: compiled.errors?.map((error) => error.message).join('; ') ?? 'not compiled' };
}

/**
 * Why a document must run on the usual executor, or null when it may be compiled:
 * - @defer and @stream, which graphql-jit does not deliver incrementally;
 * - @skip and @include: graphql-jit 0.8 drops a fragment at every spread once one spread of it is
 *   skipped, ignores a directive on a field whose response key repeats, ignores a null condition
 *   (the usual executor answers BAD_USER_INPUT) and orders fields after a skipped first occurrence;
 * - a string literal anywhere (arguments, input objects, variable defaults, directives):
 *   graphql-jit 0.8 writes literal values into the generated code through JSON.stringify and then
 *   turns its own marker strings back into `new Date(…)`, NaN or Infinity, so a string holding a
 *   marker ran as code (pre-authentication, found by an attack on this gateway). Apps send their
 *   strings as variables, which never enter the generated code;
 * - a `__proto__` alias: an object literal's `"__proto__": value` sets the prototype, so the
 *   generated code dropped that field from the result;
 * - more than MAX_COMPILED_FIELDS fields once fragments are expanded: compiling grows with the
 *   expanded selection (each spread compiled again, times the possible types), and a small
 *   document within the limits could block the event loop while compiling (docs/benchmark.md).
 */
function uncompilable(document: DocumentNode): string | null {
  let why: string | null = null;
  visit(document, {
    Directive(node) {
      if (node.name.value === 'defer' || node.name.value === 'stream') why ??= '@defer or @stream';
      if (node.name.value === 'skip' || node.name.value === 'include') why ??= '@skip or @include';
    },
    StringValue() {
      why ??= 'a string literal';
    },
    Field(node) {
      if (node.alias?.value === '__proto__') why ??= 'a __proto__ alias';
    },
  });
  if (why) return why;
  return expandedFields(document) > MAX_COMPILED_FIELDS ? `more than ${MAX_COMPILED_FIELDS} fields` : null;
}

/**
 * Why an operation whose root selects a non-null field must run on the usual executor (of this
 * schema's queries only `nodes` is one). When such a field fails, the whole `data` is null, and
 * the two executors differ in what they report: the usual executor lists the errors its siblings
 * had raised so far, graphql-jit waits for every sibling and lists all of theirs; and when one of
 * `nodes`' ids failed to load, the usual executor failed the whole list where graphql-jit answered
 * the other nodes (the relay plugin hands repeated ids their entry's promise).
 */
function nonNullRootField(args: ExecutionArgs): string | null {
  const [field] = nonNullRootFields(args);
  return field ? `the non-null root field ${field.name.value}` : null;
}

/** Fields of the document with every fragment spread expanded where it is used (bounded count). */
function expandedFields(document: DocumentNode): number {
  const fragments = new Map<string, SelectionSetNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION)
      fragments.set(definition.name.value, definition.selectionSet);
  }
  let count = 0;
  const walk = (set: SelectionSetNode, depth: number): void => {
    // Fragment cycles are refused by validation; the depth bound keeps this walk finite regardless.
    if (depth > 64) return;
    for (const selection of set.selections) {
      if (count > MAX_COMPILED_FIELDS) return;
      if (selection.kind === Kind.FIELD) {
        count++;
        if (selection.selectionSet) walk(selection.selectionSet, depth + 1);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        walk(selection.selectionSet, depth + 1);
      } else {
        const fragment = fragments.get(selection.name.value);
        if (fragment) walk(fragment, depth + 1);
      }
    }
  };
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) walk(definition.selectionSet, 0);
  }
  return count;
}

function finish(result: ExecutionResult, args: ExecutionArgs, usual: Execute): unknown {
  if (!('data' in result) || result.data === undefined) return usual(args);
  if (!result.errors) return result;
  if (result.errors.some((error) => nulledAbove(result.data, error.path))) return usual(args);
  const source = args.document.loc?.source;
  return { ...result, errors: result.errors.map((error) => asGraphQLJSError(error, source)) };
}

/**
 * Whether a field error's null went past its own field: a non-null field failed and an ancestor
 * (or the whole `data`) became null. The usual executor stops completing that ancestor at the
 * first such error and lists only the errors it met so far; graphql-jit completes every sibling
 * and lists all of theirs (a list of 20 items the REST API sent without a field: 20 errors
 * instead of 1). Such a result is answered by the usual executor instead. It is rare: the fields
 * that need a REST call of their own are nullable (docs/decisions.md), so only data the gateway
 * cannot render makes one; the request's loaders already hold what the first run read.
 */
function nulledAbove(data: unknown, path: readonly (string | number)[] | undefined): boolean {
  if (!path || path.length === 0) return false;
  let node = data;
  for (let i = 0; i < path.length - 1; i++) {
    if (node === null) return true;
    if (typeof node !== 'object' || node === undefined) return false;
    node = (node as Record<string | number, unknown>)[path[i] as string | number];
  }
  return node === null;
}

/**
 * graphql-jit's own error class keeps `locations` but no nodes or positions; Yoga rebuilds errors
 * from those (dropping the locations). The same error as graphql-js makes it: source positions
 * (from which graphql-js computes the same locations), path, original error and its extensions.
 */
function asGraphQLJSError(error: GraphQLError, source: Source | undefined): GraphQLError {
  // graphql-jit's own errors (a value a scalar cannot serialise, null in a non-null field) have no
  // original error; graphql-js makes those from a plain Error, which Yoga masks ("Unexpected
  // error.", logged): the same here.
  const original = error.originalError ?? new Error(error.message);
  return new GraphQLError(error.message, {
    ...(source && error.locations && { source, positions: error.locations.map((l) => offsetOf(source, l)) }),
    ...(error.path && { path: error.path }),
    originalError: original,
    ...(error.extensions && { extensions: error.extensions }),
  });
}

/** The offset in `source` of a 1-based line and column. */
function offsetOf(source: Source, location: { line: number; column: number }): number {
  // Line breaks as graphql-js counts them (its getLocation).
  const lineBreak = /\r\n|[\n\r]/g;
  let offset = 0;
  for (let line = 1; line < location.line; line++) {
    const found = lineBreak.exec(source.body);
    if (!found) break;
    offset = found.index + found[0].length;
  }
  return offset + location.column - 1;
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
