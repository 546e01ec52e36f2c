import { GraphQLError, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * Refuses, at validation, a document that uses `then` as a response key, with
 * GRAPHQL_VALIDATION_FAILED: the usual executor takes a result object holding it for a promise
 * (docs/decisions.md).
 */
export function useReservedResponseKeys(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(noThenResponseKey);
    },
  };
}

const noThenResponseKey: ValidationRule = (context) => ({
  Field(node) {
    const key = node.alias ?? node.name;
    if (key.value !== 'then') return;
    context.reportError(
      new GraphQLError(
        'The response key "then" is reserved: a result object with a "then" member is taken for a promise. Choose another alias.',
        { nodes: key },
      ),
    );
  },
});
