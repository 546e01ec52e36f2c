import { getOperationAST, Kind, valueFromASTUntyped, visit } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { requestError } from '../errors/error-codes.ts';
import { effectiveVariables } from '../execution/operation-cost.ts';

/**
 * The most entity representations one request may ask `_entities` for (FEDERATION=true;
 * docs/supergraph.md): a router batches every reference of a query plan into one `_entities`
 * call, and each representation is a load through the request's loaders (a REST call for a
 * deposit or an intent, within the request's call budget). Past the bound the request is refused
 * with QUERY_LIMIT_EXCEEDED before anything runs, counting every `_entities` field of the document
 * (aliases included).
 */
export const MAX_REPRESENTATIONS = 1000;

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
