import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * Serialises a successful result as soon as execution completes, as `result.stringify` (which Yoga
 * calls when a result has one): a shared result is serialised once, and sooner is cheaper
 * (docs/benchmark.md#figures-behind-design-choices). The text is used only for that very object
 * while it has neither `errors` nor `extensions`; anything else gets a fresh `JSON.stringify`. A
 * plugin that edits `data` in place after execution must come before this one.
 */
export function useEagerStringify(): Plugin {
  return {
    onExecute() {
      return {
        onExecuteDone({ result }) {
          if (Symbol.asyncIterator in result || !isPlainSuccess(result)) return;
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
