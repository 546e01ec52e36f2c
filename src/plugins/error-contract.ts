import { type ExecutionArgs, type ExecutionResult, GraphQLError, Kind } from 'graphql';
import { handleStreamOrSingleExecutionResult, maskError, type Plugin } from 'graphql-yoga';
import { shortenErrorEchoes } from '../errors/echoes.ts';
import { type ErrorCode, requestError } from '../errors/error-codes.ts';
import { nonNullRootFields } from '../execution/root-fields.ts';

/**
 * One error contract (docs/errors.md): every error a client sees has an `extensions.code` of
 * ERROR_CODES and echoes at most a prefix of what the client sent (echoes.ts), in every result and
 * every payload of a stream. Closes Yoga's gaps: uncoded variable errors get BAD_USER_INPUT (400),
 * the body parser's `extensions.originalError` is removed, an unparsable Content-Type gets an
 * UNSUPPORTED_MEDIA_TYPE body, and a null `data` lists only its cause. The executor's own field
 * errors get their code in `maskUncodedError`.
 */
export function useErrorContract(): Plugin {
  const shortenPayload = ({ result }: { result: ExecutionResult }) => shortenEchoesOf(result);
  return {
    onRequestParse({ request, requestParser }) {
      if (requestParser || request.method !== 'POST') return;
      throw requestError(
        'UNSUPPORTED_MEDIA_TYPE',
        'Send the request as application/json (or application/graphql-response+json for the answer).',
      );
    },
    onExecute({ args }) {
      return {
        onExecuteDone(payload) {
          const { result } = payload;
          if (!(Symbol.asyncIterator in result) && result.data === null && result.errors) {
            const causes = causesOfNullData(result.errors, args);
            if (causes.length > 0 && causes.length < result.errors.length) {
              const answer = { ...result, errors: causes };
              payload.setResult(answer);
              shortenEchoesOf(answer);
              return;
            }
          }
          if (!(Symbol.asyncIterator in result) && !('data' in result) && result.errors) {
            for (const error of result.errors) {
              const extensions = error.extensions as Record<string, unknown>;
              extensions.code ??= 'BAD_USER_INPUT';
            }
          }
          return handleStreamOrSingleExecutionResult(payload, shortenPayload);
        },
      };
    },
    onSubscribe() {
      return {
        onSubscribeResult: (payload) => handleStreamOrSingleExecutionResult(payload, shortenPayload),
      };
    },
    onResultProcess({ result }) {
      for (const one of Array.isArray(result) ? result : [result]) {
        if (!('errors' in one) || !one.errors) continue;
        // Errors from before execution (parse, validation, parameters) pass only here.
        for (const error of one.errors) shortenErrorEchoes(error as GraphQLError);
        for (const error of one.errors) {
          const extensions = error.extensions as Record<string, unknown> | undefined;
          if (!extensions || !('originalError' in extensions)) continue;
          delete extensions.originalError;
          // Yoga's 400 for it went with originalError: stated for every media type instead.
          const http = extensions.http as { status?: number; spec?: boolean } | undefined;
          if (http?.spec) extensions.http = { ...http, spec: false };
        }
      }
    },
  };
}

/**
 * The errors that nulled `data`: those at a non-null root field. The executor lists beside them
 * whichever errors the other root fields raised by then, a matter of timing; only the cause is kept.
 */
function causesOfNullData(errors: readonly GraphQLError[], args: ExecutionArgs): GraphQLError[] {
  const keys = new Set(nonNullRootFields(args).map((field) => (field.alias ?? field.name).value));
  return errors.filter((error) => keys.has(String(error.path?.[0])));
}

/** A result's errors, and those of each incremental payload it carries (@defer, @stream). */
export function payloadErrors(result: ExecutionResult): GraphQLError[] {
  const errors = [...(result.errors ?? [])];
  const incremental = (result as { incremental?: { errors?: readonly GraphQLError[] }[] }).incremental;
  for (const part of incremental ?? []) errors.push(...(part.errors ?? []));
  return errors;
}

function shortenEchoesOf(result: ExecutionResult): void {
  for (const error of payloadErrors(result)) shortenErrorEchoes(error);
}

/**
 * Yoga's error masking, with a code on the field errors the executor raises itself (unmasked and
 * uncoded by Yoga): an argument the client made null at run time is BAD_USER_INPUT, its message
 * kept; anything else is the gateway's fault, masked as a resolver's error ("Unexpected error.").
 */
export function maskUncodedError(error: unknown, message: string, isDev?: boolean): Error {
  const masked = maskError(error, message, isDev);
  if (masked !== error || !(error instanceof GraphQLError)) return masked;
  const extensions = error.extensions as Record<string, unknown>;
  if (extensions.code !== undefined) return error;
  const node = error.nodes?.[0];
  if (node && VALUE_KINDS.has(node.kind)) {
    extensions.code = 'BAD_USER_INPUT' satisfies ErrorCode;
    return error;
  }
  if (!Array.isArray(error.path)) return error;
  const fault = new GraphQLError(error.message, {
    ...(error.nodes && { nodes: error.nodes }),
    ...(error.source && { source: error.source }),
    ...(error.positions && { positions: error.positions }),
    path: error.path,
    originalError: new Error(error.message),
  });
  return maskError(fault, message, isDev);
}

const VALUE_KINDS: ReadonlySet<string> = new Set([
  Kind.VARIABLE,
  Kind.NULL,
  Kind.INT,
  Kind.FLOAT,
  Kind.STRING,
  Kind.BOOLEAN,
  Kind.ENUM,
  Kind.LIST,
  Kind.OBJECT,
]);
