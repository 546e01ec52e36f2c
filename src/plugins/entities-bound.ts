import { getOperationAST, Kind, valueFromASTUntyped, visit } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { requestError } from '../errors/error-codes.ts';
import { effectiveVariables } from '../execution/operation-cost.ts';

/** The most entity representations one request may ask `_entities` for (docs/supergraph.md). */
export const MAX_REPRESENTATIONS = 1000;

/**
 * Refuses, before anything runs, a request whose `_entities` fields (aliases included) ask for more
 * than `max` representations together, with QUERY_LIMIT_EXCEEDED: each is a load, a REST call.
 */
export function useEntitiesBound(max = MAX_REPRESENTATIONS): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      let count = 0;
      // As sent, with the operation's defaults for what was not.
      const variables = effectiveVariables(
        getOperationAST(args.document, args.operationName),
        args.variableValues as Record<string, unknown> | undefined,
      );
      visit(args.document, {
        Field(node) {
          if (node.name.value !== '_entities') return;
          const argument = node.arguments?.find((a) => a.name.value === 'representations');
          if (!argument) return;
          const value =
            argument.value.kind === Kind.VARIABLE
              ? variables[argument.value.name.value]
              : valueFromASTUntyped(argument.value, variables);
          count += Array.isArray(value) ? value.length : 1;
        },
      });
      if (count <= max) return;
      setResultAndStopExecution({
        data: null,
        errors: [
          requestError(
            'QUERY_LIMIT_EXCEEDED',
            `_entities was asked for ${count} representations; at most ${max} may be resolved in one request: split the query plan's batch.`,
            { extensions: { representations: count, maxRepresentations: max } },
          ),
        ],
      });
    },
  };
}
