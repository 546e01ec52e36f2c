import { GraphQLError, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * Refuses, at validation, a document that uses `then` as a response key (an alias: no field of the
 * schema has that name), with GRAPHQL_VALIDATION_FAILED.
 *
 * The usual executor (@graphql-tools/executor) takes any value whose `then` is not null for a
 * promise, result objects included: an object holding the key `then` was "awaited" and the request
 * answered INTERNAL_SERVER_ERROR, while compiled execution answered its data. Refused before
 * anything runs, the same document gets the same clear answer whatever executes it.
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
