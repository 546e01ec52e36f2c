import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import {
  BREAK,
  type DirectiveNode,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FragmentDefinitionNode,
  GraphQLError,
  getDirectiveValues,
  getOperationAST,
  Kind,
  type SelectionSetNode,
  visit,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { quoted } from '../errors/echoes.ts';
import { type ErrorCode, requestError } from '../errors/error-codes.ts';
import { INPUT_LIMITS } from '../schema/input-limits.ts';

/**
 * @defer and @stream (@graphql-yoga/plugin-defer-stream), its validation rules run only for
 * documents that use either directive (they check nothing else, at a cost:
 * docs/benchmark.md#figures-behind-design-choices). Before execution, a bad argument is refused
 * (incrementalArgumentError: the executor would answer INTERNAL_SERVER_ERROR), and so is a stream
 * the client's `accept` cannot take (NOT_ACCEPTABLE, 406, where Yoga would run it first).
 */
export function useIncrementalDelivery(): Plugin {
  const plugin = useDeferStream() as Plugin;
  const onValidate = plugin.onValidate;
  const incremental = new WeakMap<DocumentNode, boolean>();
  const usesIncremental = (document: DocumentNode) => {
    let uses = incremental.get(document);
    if (uses === undefined) {
      uses = false;
      visit(document, {
        Directive(node) {
          if (node.name.value === 'defer' || node.name.value === 'stream') {
            uses = true;
            return BREAK;
          }
          return undefined;
        },
      });
      incremental.set(document, uses);
    }
    return uses;
  };
  const check = ({
    args,
    setResultAndStopExecution,
  }: {
    args: ExecutionArgs;
    setResultAndStopExecution(result: ExecutionResult): void;
  }) => {
    if (!usesIncremental(args.document)) return;
    const error = incrementalArgumentError(args);
    if (error) {
      setResultAndStopExecution({ errors: [error] });
      return;
    }
    const request = (args.contextValue as { request?: Request } | undefined)?.request;
    if (request && !acceptsStream(request) && asksForStream(args)) {
      setResultAndStopExecution({ errors: [notAcceptable()] });
    }
  };
  return {
    ...plugin,
    ...(onValidate && {
      onValidate(payload) {
        if (usesIncremental(payload.params.documentAST)) return onValidate(payload);
        return undefined;
      },
    }),
    onExecute: check,
    onSubscribe: check,
  };
}

/**
 * Whether the request's `accept` takes a query's stream as Yoga's result processors choose: SSE or
 * multipart/mixed, utf-8 only, wildcards matching; none takes anything. (A subscription's is Yoga's.)
 */
function acceptsStream(request: Request): boolean {
  const streams = ['text/event-stream', 'multipart/mixed'];
  for (const item of (request.headers.get('accept') || '*/*').replace(/\s/g, '').toLowerCase().split(',')) {
    const [type, ...params] = item.split(';');
    if (!type || params.some((param) => param.startsWith('charset=') && param !== 'charset=utf-8')) continue;
    const [major, minor] = type.split('/');
    if (
      streams.some((stream) => {
        const [streamMajor, streamMinor] = stream.split('/');
        return (major === '*' || major === streamMajor) && (minor === '*' || minor === streamMinor);
      })
    )
      return true;
  }
  return false;
}

/** The refusal of a stream the client cannot take: 406, before anything runs. */
function notAcceptable() {
  return requestError(
    'NOT_ACCEPTABLE',
    'This operation is answered as a stream (it uses @defer or @stream): send an accept header that ' +
      'allows multipart/mixed or text/event-stream, or turn them off with `if: false`.',
  );
}

/** Whether the operation that runs has a @defer or @stream (fragments too) whose `if` is not false. */
function asksForStream(args: ExecutionArgs): boolean {
  const variables = (args.variableValues ?? {}) as Record<string, unknown>;
  const active = incrementalDirectives(args, (name, directive) => {
    const definition = args.schema.getDirective(name);
    if (!definition) return undefined;
    return getDirectiveValues(definition, { directives: [directive] }, variables)?.if !== false
      ? true
      : undefined;
  });
  return active ?? false;
}

/** Calls `visit` on each @defer and @stream of the operation that runs until one returns a value. */
function incrementalDirectives<T>(
  args: ExecutionArgs,
  visit: (name: 'defer' | 'stream', directive: DirectiveNode) => T | undefined,
): T | undefined {
  const operation = getOperationAST(args.document, args.operationName);
  if (!operation) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of args.document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const seen = new Set<string>();
  const pending: SelectionSetNode[] = [operation.selectionSet];
  for (let set = pending.pop(); set; set = pending.pop()) {
    for (const selection of set.selections) {
      for (const directive of selection.directives ?? []) {
        const name = directive.name.value;
        if (name !== 'defer' && name !== 'stream') continue;
        const found = visit(name, directive);
        if (found !== undefined) return found;
      }
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (fragment && !seen.has(name)) {
          seen.add(name);
          pending.push(fragment.selectionSet);
        }
      } else if (selection.selectionSet) {
        pending.push(selection.selectionSet);
      }
    }
  }
  return undefined;
}

/**
 * The first bad argument of a @defer or @stream in the operation that runs, as BAD_USER_INPUT (400):
 * a null `if`, an `initialCount` not an integer ≥ 0, a `label` longer than INPUT_LIMITS.label.
 */
export function incrementalArgumentError(args: ExecutionArgs): GraphQLError | null {
  const variables = (args.variableValues ?? {}) as Record<string, unknown>;
  return (
    incrementalDirectives(
      args,
      (name, directive) => directiveError(args, name, directive, variables) ?? undefined,
    ) ?? null
  );
}

function directiveError(
  args: ExecutionArgs,
  name: 'defer' | 'stream',
  node: DirectiveNode,
  variables: Record<string, unknown>,
): GraphQLError | null {
  const definition = args.schema.getDirective(name);
  if (!definition) return null;
  let values: Record<string, unknown> | undefined;
  try {
    values = getDirectiveValues(definition, { directives: [node] }, variables);
  } catch (error) {
    return badArgument(`@${name}: ${(error as Error).message}`, node);
  }
  if (!values) return null;
  const { label, initialCount } = values;
  if (typeof label === 'string' && label.length > INPUT_LIMITS.label) {
    return badArgument(
      `@${name}(label:) must be at most ${INPUT_LIMITS.label} characters; received ${label.length}`,
      node,
    );
  }
  if (name === 'stream' && !(Number.isSafeInteger(initialCount) && (initialCount as number) >= 0)) {
    return badArgument(
      `@stream(initialCount:) must be an integer of 0 or more; received ${quoted(initialCount)}`,
      node,
    );
  }
  return null;
}

function badArgument(message: string, node: DirectiveNode): GraphQLError {
  return new GraphQLError(message, {
    nodes: node,
    extensions: { code: 'BAD_USER_INPUT' satisfies ErrorCode, http: { status: 400 } },
  });
}
