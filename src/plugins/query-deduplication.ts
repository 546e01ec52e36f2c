import { type DocumentNode, type ExecutionResult, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../context.ts';

/**
 * Identical queries from the same caller that arrive while one of them is executing wait for it
 * and answer with its result, instead of executing again. The upstream client already coalesces
 * their REST calls into one; this spares the GraphQL work on top (execution and serialisation
 * are most of a request's CPU), which matters when many screens of one merchant poll the same
 * dashboard through the same key.
 *
 * Identical means: the same parsed document (Yoga's parser cache hands out one object per query
 * text), operation name and variables, and the same `sharingScope` — the caller's key scope and
 * its cache generation, so callers never see each other's results, and a query that arrives after
 * the caller's withdrawal succeeded never joins one that started before it. A joiner sees data at
 * most as old as the moment the first query started, as with upstream coalescing.
 *
 * Only queries (never mutations) with a key are shared, and only a result without errors or
 * extensions: a failed result stays with its own request (its errors name that request's
 * failure), and each joiner then executes on its own. Nothing is kept once the execution is over.
 *
 * Run it after every plugin that may refuse an operation (authentication, limits): a joiner is
 * checked like any other request before it joins.
 */
export function useQueryDeduplication(options: {
  sharingScope: (context: GatewayContext) => string | null;
  /** Called for each query answered with another's result (metrics). */
  onJoined?: () => void;
}): Plugin<GatewayContext> {
  const inFlight = new WeakMap<DocumentNode, Map<string, Promise<ExecutionResult | null>>>();
  return {
    onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      const scope = options.sharingScope(args.contextValue);
      if (scope === null) return;
      if (getOperationAST(args.document, args.operationName)?.operation !== 'query') return;
      const variables = serialised(args.variableValues);
      if (variables === null) return;
      let byKey = inFlight.get(args.document);
      if (!byKey) {
        byKey = new Map();
        inFlight.set(args.document, byKey);
      }
      const sharing = byKey;
      const key = `${scope}\n${args.operationName ?? ''}\n${variables}`;
      const pending = sharing.get(key);
      if (pending) {
        // Envelop waits for a promise returned from onExecute before it executes.
        return pending.then((result) => {
          if (!result) return;
          options.onJoined?.();
          setResultAndStopExecution(result);
        });
      }
      setExecuteFn(async (executionArgs) => {
        const execution = Promise.resolve(executeFn(executionArgs));
        const shared = execution.then(
          (result) => (isShareable(result) ? result : null),
          () => null,
        );
        sharing.set(key, shared);
        void shared.then(() => {
          if (sharing.get(key) === shared) sharing.delete(key);
        });
        return execution;
      });
    },
  };
}

/**
 * The variables as a key, or null when they cannot be serialised (nested past the stack, which
 * useVariableDepthLimit refuses earlier): such a query then runs on its own, unshared.
 */
function serialised(variables: unknown): string | null {
  try {
    return JSON.stringify(variables ?? null);
  } catch {
    return null;
  }
}

function isShareable(result: ExecutionResult | AsyncIterable<unknown>): result is ExecutionResult {
  return !(Symbol.asyncIterator in result) && !result.errors && !result.extensions;
}
