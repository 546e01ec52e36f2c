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

/** Executions of a document on the usual executor before it is compiled (one-off documents never are). */
export const COMPILE_AFTER_USES = 10;

/** The most fields (fragments expanded) a compiled document may have: compiling grows with them. */
export const MAX_COMPILED_FIELDS = 200;

export interface CompiledExecutionOptions {
  /** Where each document's decision (compiled, or why not) is logged, at debug. */
  logger: Logger;
  /** Whether this request's caller may have a document compiled: a key the REST API accepted lately. */
  mayCompile: (context: GatewayContext) => boolean;
  /** Where compiled queries are kept; the hot path reads the same ones. @default new CompiledQueries() */
  compiled?: CompiledQueries;
}

/**
 * Runs queries as code graphql-jit compiles once per document, answering exactly what the usual
 * executor answers (docs/benchmark.md#how-compiled-execution-is-kept-exact-and-safe): only shapes
 * it answers exactly, on their COMPILE_AFTER_USES-th execution, for a caller `mayCompile` admits; a
 * request error, or a null past its field, is answered by the usual executor. A field needs its own
 * resolver wherever graphql-js's default one would call or await what it finds. Comes after every
 * plugin that replaces the executor, before query deduplication.
 */
export function useCompiledExecution(options: CompiledExecutionOptions): Plugin {
  const { logger } = options;
  const compiled = options.compiled ?? new CompiledQueries();
  const compiledFor = (args: ExecutionArgs): CompiledQuery | null => {
    const entry = compiled.entryOf(args.document, args.operationName);
    if (entry.query !== undefined) return entry.query;
    if (++entry.uses < COMPILE_AFTER_USES) return null;
    if (!options.mayCompile(args.contextValue as GatewayContext)) return null;
    const outcome = compile(args);
    entry.query = 'query' in outcome ? outcome.query : null;
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

/** Compiled queries per parsed document and operation name (null: not compiled; undefined: undecided). */
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
  // Never a mutation: graphql-jit runs the root fields after a failed non-null one (money moves).
  if (operation.operation !== 'query') return { why: operation.operation };
  const refused = uncompilable(args.document) ?? nonNullRootField(args);
  if (refused) return { why: refused };
  const compiled = compileQuery(args.schema, args.document, args.operationName ?? undefined, {
    disablingCapturingStackErrors: true,
  });
  if (isCompiledQuery(compiled)) return { query: compiled };
  return { why: compiled.errors?.map((error) => error.message).join('; ') ?? 'not compiled' };
}

/**
 * Why a document must run on the usual executor, or null: @defer or @stream; @skip or @include
 * (graphql-jit 0.8 mishandles them); a string literal anywhere (graphql-jit 0.8 could run one as
 * code); a `__proto__` alias (dropped from the result); more than MAX_COMPILED_FIELDS expanded fields.
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
 * Why an operation whose root selects a non-null field (`nodes`) runs on the usual executor: the
 * two executors report that field's failure differently.
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
  // `errors` first, as graphql-js answers (graphql-jit puts `data` first): the same bytes, and so
  // the same ETag (conditional-get.ts), once compiled.
  const { errors, ...rest } = result;
  return { errors: errors.map((error) => asGraphQLJSError(error, source)), ...rest };
}

/**
 * Whether a field error's null went past its own field (a non-null field failed and nulled an
 * ancestor or `data`): graphql-jit then lists every sibling's error where graphql-js stops at the
 * first, so the usual executor answers, from what the request's loaders already hold.
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
 * The error as graphql-js makes it (source positions, path, original error, extensions): Yoga
 * rebuilds errors from nodes or positions, which graphql-jit's own class lacks.
 */
function asGraphQLJSError(error: GraphQLError, source: Source | undefined): GraphQLError {
  // graphql-jit's own errors have none; graphql-js's equivalents come from a plain Error, masked by Yoga.
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
