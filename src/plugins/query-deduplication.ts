import { createHash } from 'node:crypto';
import {
  type DocumentNode,
  type ExecutionResult,
  getOperationAST,
  type OperationDefinitionNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../context.ts';
import { deepFreeze } from '../deep-freeze.ts';
import type { KeptResults } from './kept-results.ts';

/** How a query was answered with another's result: joined while it executed, or kept after. */
export type SharedHow = 'in_flight' | 'kept';

/** Each request answered with another's result, and how (the access log's `sharedResult`). */
const sharedResults = new WeakMap<GatewayContext, SharedHow>();

/** How query deduplication answered the request of `context` with another's result; null: it executed its own. */
export function sharedResultOf(context: GatewayContext): SharedHow | null {
  return sharedResults.get(context) ?? null;
}

/**
 * Identical queries from the same caller share one execution, instead of executing again. The
 * upstream client already coalesces and caches their REST calls; this spares the GraphQL work on
 * top (execution and serialisation are most of a request's CPU), which matters when many screens
 * of one merchant poll the same dashboard through the same key.
 *
 * A query is shared two ways:
 * - **In flight**: one that arrives while an identical one executes waits for it and answers with
 *   its result. It sees data at most as old as the moment the first query started, as with
 *   upstream coalescing.
 * - **Kept** (`kept`): after the execution, while every REST answer it read is still cached: the
 *   contract is KeptResults' (kept-results.ts). Without it, cached reads finish executions so
 *   quickly that hardly any identical query arrives during one
 *   (docs/benchmark.md#why-the-caches-are-built-this-way).
 *
 * Identical means: the same parsed document (Yoga's parser cache hands out one object per query
 * text), operation name and values of the variables the operation declares (others are ignored
 * by graphql-js, and so here), and the same `generationScope`: the caller's scope and its
 * invalidation generation, so callers never see each other's results, and a query that arrives
 * after the caller's withdrawal succeeded or ended with an unknown outcome (here or on another
 * replica of the fleet) never joins one that started before it, nor gets a result kept from before it.
 *
 * Only queries (never mutations) with a key are shared, and only a result without errors or
 * extensions: a failed result stays with its own request (its errors name that request's
 * failure), and each joiner then executes on its own. A kept result's data is frozen, so no
 * request can change what another receives.
 *
 * Run it after every plugin that may refuse an operation (authentication, limits, rate limits): a
 * request is checked like any other before it is answered with a shared result. And after
 * useEagerStringify, whose text of the result is what a kept result is measured by.
 */
export function useQueryDeduplication(options: {
  /** The caller's generation scope (MerchantWalletClient.generationScope); null: not shared. */
  generationScope: (context: GatewayContext) => string | null;
  /** Where results are kept after their execution; none: shared in flight only. */
  kept?: KeptResults;
  /** Called for each query answered with another's result (metrics; the access log reads sharedResultOf). */
  onShared?: (context: GatewayContext, how: SharedHow) => void;
}): Plugin<GatewayContext> {
  const inFlight = new Map<string, Promise<ExecutionResult | null>>();
  /** A number per parsed document, for keys: documents Yoga's parser cache dropped are forgotten. */
  const documentIds = new WeakMap<DocumentNode, number>();
  let nextDocumentId = 0;
  const documentId = (document: DocumentNode): number => {
    let id = documentIds.get(document);
    if (id === undefined) {
      id = nextDocumentId++;
      documentIds.set(document, id);
    }
    return id;
  };
  return {
    onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      const context = args.contextValue;
      const scope = options.generationScope(context);
      if (scope === null) return;
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation !== 'query') return;
      const variables = serialised(operation, args.variableValues);
      if (variables === null) return;
      // A digest, so that a key's length does not grow with the variables' (the kept results'
      // keys take room in the cache); the scope stays in clear, first.
      const digest = createHash('sha256')
        .update(`${documentId(args.document)}\n${args.operationName ?? ''}\n${variables}`)
        .digest('base64url');
      const key = `${scope}\n${digest}`;
      const kept = options.kept?.get<ExecutionResult>(key);
      if (kept) {
        sharedResults.set(context, 'kept');
        options.onShared?.(context, 'kept');
        setResultAndStopExecution(kept.result);
        return;
      }
      const pending = inFlight.get(key);
      if (pending) {
        // Envelop waits for a promise returned from onExecute before it executes.
        return pending.then((result) => {
          if (!result) return;
          sharedResults.set(context, 'in_flight');
          options.onShared?.(context, 'in_flight');
          setResultAndStopExecution(result);
        });
      }
      setExecuteFn(async (executionArgs) => {
        const execution = Promise.resolve(executeFn(executionArgs));
        const shared = execution.then(
          (result) => (isShareable(result) ? result : null),
          () => null,
        );
        inFlight.set(key, shared);
        void shared.then(() => {
          if (inFlight.get(key) === shared) inFlight.delete(key);
        });
        return execution;
      });
      const keep = options.kept;
      if (!keep) return;
      return {
        // After useEagerStringify's: the text it made is the one every request sends.
        onExecuteDone({ result }) {
          const { reads } = context.caller;
          if (!isShareable(result) || reads.currentUntil === Number.NEGATIVE_INFINITY) return;
          const text =
            typeof result.stringify === 'function' ? result.stringify(result) : JSON.stringify(result);
          // Frozen once kept (synchronously, before any request can receive it), and only then.
          if (keep.keep(context.caller.scope, key, { result, text }, reads)) deepFreeze(result.data);
        },
      };
    },
  };
}

/**
 * The values of the variables `operation` declares, as text; null when they cannot be told apart
 * as text: numbers JSON has no text for (`1e400` arrives as Infinity, which JSON.stringify would
 * write as null, the text of another request's `null`), or nesting past the stack (which
 * useVariableDepthLimit refuses earlier). Such a query then runs on its own, unshared.
 */
function serialised(operation: OperationDefinitionNode, variables: unknown): string | null {
  const declared: Record<string, unknown> = {};
  const given = (variables ?? {}) as Record<string, unknown>;
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    if (Object.hasOwn(given, name)) declared[name] = given[name];
  }
  try {
    return JSON.stringify(declared, finiteNumbersOnly);
  } catch {
    return null;
  }
}

function finiteNumbersOnly(_key: string, value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new RangeError('not a JSON number');
  return value;
}

function isShareable(
  result: ExecutionResult | AsyncIterable<unknown>,
): result is ExecutionResult & { stringify?: (value: ExecutionResult) => string } {
  return !(Symbol.asyncIterator in result) && !result.errors && !result.extensions;
}
