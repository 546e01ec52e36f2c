import { type ExecutionResult, GraphQLError } from 'graphql';
import { handleStreamOrSingleExecutionResult, type Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../context.ts';
import { isGatewayError } from '../errors/errors.ts';
import { payloadErrors } from './error-contract.ts';

/** The longest REST message logged (the REST API's answers are capped, but a log line need not hold one whole). */
const MAX_LOGGED_MESSAGE = 2_048;

/**
 * Logs what clients cannot see, with the request id: an upstream failure's cause (warn), the REST
 * answer withheld behind a generic message (warn), and every unexpected error Yoga masks (error),
 * in every result, payload and event. Never a header, so never the caller's key.
 */
export function useErrorLogging(): Plugin<GatewayContext> {
  return {
    onExecute({ args }) {
      const log = logErrorsOf(args.contextValue);
      return { onExecuteDone: (payload) => handleStreamOrSingleExecutionResult(payload, log) };
    },
    onSubscribe({ args }) {
      const log = logErrorsOf(args.contextValue);
      return { onSubscribeResult: (payload) => handleStreamOrSingleExecutionResult(payload, log) };
    },
  };
}

function logErrorsOf(context: GatewayContext) {
  return ({ result }: { result: ExecutionResult }) => {
    for (const error of payloadErrors(result)) {
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
        if (original.withheld) {
          const { code, message } = original.withheld;
          context.logger().warn(
            {
              code: original.code,
              upstream: original.upstream,
              path,
              upstreamCode: code,
              upstreamMessage: message === null ? null : message.slice(0, MAX_LOGGED_MESSAGE),
            },
            'upstream message withheld',
          );
        }
      } else if (original && !(original instanceof GraphQLError)) {
        context.logger().error({ err: original, path }, 'unexpected error');
      }
    }
  };
}
