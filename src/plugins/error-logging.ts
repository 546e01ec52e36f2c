import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../context.ts';
import { isGatewayError } from '../errors.ts';

/**
 * Logs what clients cannot see: the cause behind an upstream failure (warn) and every unexpected
 * error, which Yoga masks as "Unexpected error." (error), each with the request id. Nothing here
 * logs headers, so the caller's key never reaches the logs.
 */
export function useErrorLogging(): Plugin<GatewayContext> {
  return {
    onExecute({ args }) {
      const context = args.contextValue;
      return {
        onExecuteDone({ result }) {
          if (Symbol.asyncIterator in result) return;
          for (const error of (result.errors ?? []) as GraphQLError[]) {
            const original = error.originalError;
            const path = error.path?.join('.');
            if (isGatewayError(original)) {
              if (original.code.startsWith('UPSTREAM') || original.code === 'OUTCOME_UNKNOWN') {
                const cause = original.cause as (Error & { code?: string }) | undefined;
                context.logger().warn(
                  {
                    code: original.code,
                    upstream: original.upstream,
                    path,
                    cause: cause?.message,
                    causeCode: (cause as { code?: string } | undefined)?.code,
                  },
                  'upstream failure',
                );
              }
            } else if (original && !(original instanceof GraphQLError)) {
              context.logger().error({ err: original, path }, 'unexpected error');
            }
          }
        },
      };
    },
  };
}
