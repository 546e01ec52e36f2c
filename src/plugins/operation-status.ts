import type { ExecutionResult, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../context.ts';
import { isGatewayError } from '../errors.ts';

/** Codes that set the HTTP status when they fail the whole operation. */
const STATUS_BY_CODE: Record<string, number> = { UNAUTHENTICATED: 401, FORBIDDEN: 403 };

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
 * and an error says the key was refused, the HTTP status says so too (401/403), so HTTP-level
 * clients and proxies see it.
 */
export function useOperationStatus(): Plugin<GatewayContext> {
  return {
    onExecute() {
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          if (!failedWhole(result)) return;
          const statuses = (result.errors ?? []).map((e) => STATUS_BY_CODE[codeOf(e) ?? ''] ?? 0);
          const status = Math.max(0, ...statuses);
          if (!status) return;
          setResult({ ...result, extensions: { ...result.extensions, http: { status } } });
        },
      };
    },
  };
}
