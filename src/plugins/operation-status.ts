import type { ExecutionResult, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../context.ts';
import { type GatewayErrorCode, isGatewayError, OPERATION_HTTP_STATUS } from '../errors.ts';

function failedWhole(result: ExecutionResult): boolean {
  if (!result.errors?.length) return false;
  if (result.data == null) return true;
  return Object.values(result.data).every((value) => value === null);
}

function codeOf(error: GraphQLError): string | undefined {
  const original = error.originalError;
  if (isGatewayError(original)) return original.code;
  const code = error.extensions?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * With partial data the HTTP status stays 200 (GraphQL over HTTP); when every root field failed
 * and an error's code has an HTTP status (OPERATION_HTTP_STATUS: the key was refused), the HTTP
 * status says so too, so HTTP-level clients and proxies see it.
 */
export function useOperationStatus(): Plugin<GatewayContext> {
  return {
    onExecute() {
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          if (!failedWhole(result)) return;
          const statuses = (result.errors ?? []).map(
            (e) => OPERATION_HTTP_STATUS[codeOf(e) as GatewayErrorCode] ?? 0,
          );
          const status = Math.max(0, ...statuses);
          if (!status) return;
          setResult({ ...result, extensions: { ...result.extensions, http: { status } } });
        },
      };
    },
  };
}
