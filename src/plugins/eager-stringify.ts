import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * Serialises a successful result as soon as execution completes, instead of when Yoga builds the
 * response a few promise hops later, and keeps the text on the result.
 *
 * Why: a result shared by useQueryDeduplication is then serialised once, not once per request
 * that receives it. And with several requests in flight, the result's objects are still in the
 * CPU caches right after execution, where `JSON.stringify` takes less time than at Yoga's usual
 * point (docs/benchmark.md#figures-behind-design-choices). The bytes are the same: it is
 * `JSON.stringify` of the same object.
 *
 * Contract: Yoga calls `result.stringify` when a result has one (graphql-jit's convention). The
 * precomputed text is used only for the very object that was serialised, and only while it still
 * has neither `errors` nor `extensions`; a plugin that replaces the result (`setResult`) or adds
 * either gets a fresh `JSON.stringify`. Results with errors are never precomputed. A plugin that
 * would edit `data` in place after execution must come before this one.
 */
export function useEagerStringify(): Plugin {
  return {
    onExecute() {
      return {
        onExecuteDone({ result }) {
          if (Symbol.asyncIterator in result || !isPlainSuccess(result)) return;
          // A result shared by useQueryDeduplication passes here once per request that received it.
          if (Object.hasOwn(result, 'stringify')) return;
          const text = JSON.stringify(result);
          // Not enumerable: a copy of the result (`{ ...result, extensions }`) does not carry it.
          Object.defineProperty(result, 'stringify', {
            value: (value: ExecutionResult) =>
              value === result && isPlainSuccess(value) ? text : JSON.stringify(value),
          });
        },
      };
    },
  };
}

function isPlainSuccess(result: ExecutionResult): boolean {
  return !result.errors && !result.extensions;
}
