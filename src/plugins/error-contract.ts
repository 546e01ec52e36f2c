import { type ExecutionArgs, type ExecutionResult, GraphQLError, Kind } from 'graphql';
import { handleStreamOrSingleExecutionResult, maskError, type Plugin } from 'graphql-yoga';
import { shortenErrorEchoes } from '../errors/echoes.ts';
import { type ErrorCode, requestError } from '../errors/error-codes.ts';
import { nonNullRootFields } from '../execution/root-fields.ts';

/**
 * One error contract: every error a client sees has an `extensions.code` from ERROR_CODES (error-codes.ts, documented in docs/errors.md),
 * and no error echoes what the client sent. Yoga and its plugins leave four gaps, closed here:
 *
 * - variables that are missing or of the wrong type fail before execution without a code: they
 *   get BAD_USER_INPUT (HTTP 400 as before);
 * - Yoga's JSON body parser copies the parser's message, with a piece of the body, into
 *   `extensions.originalError`: removed, in every environment;
 * - graphql-js repeats names, literals and variables' values whole (`Variable "$x" got invalid
 *   value "…90 KB…"`, `Cannot query field "…"`): every message, of every result and of each
 *   payload of a stream, repeats at most a prefix of them (echoes.ts);
 * - a POST whose Content-Type no parser takes answers an empty 415: it gets an error body with
 *   UNSUPPORTED_MEDIA_TYPE.
 *
 * Field errors the executor raises itself, without a code, get one in `maskUncodedError` below.
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
          // A result without `data` is a request error: here, the variables could not be coerced.
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
          // Yoga answers such an error 400 under application/json only while originalError is
          // there; without it, the status must be stated for every media type (GraphQL over HTTP:
          // a body that is not JSON SHOULD be 400).
          const http = extensions.http as { status?: number; spec?: boolean } | undefined;
          if (http?.spec) extensions.http = { ...http, spec: false };
        }
      }
    },
  };
}

/**
 * The errors that nulled `data`: those at a non-null root field (of this schema, `nodes` and
 * `createWithdrawalIntent`). When such a field fails, the usual executor gives up on the whole
 * `data` and lists, beside its error, whichever errors the other root fields had raised by then, a
 * matter of timing (a micro-cached read fails sooner than a sent one). Their fields are not in the
 * answer anyway; listing only the cause makes the answer the same every time.
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
 * Yoga's error masking (every error of a result passes here), with a code on the field errors the
 * executor raises itself. Yoga masks an error thrown by a resolver unless it is a GraphQLError;
 * the executor's own GraphQLErrors pass unmasked and without a code. Two kinds reach a client:
 *
 * - an argument the client made null at run time (`@skip(if: $v)` with `$v: Boolean = false` sent
 *   as null; the error points at the argument's value), on a field or at the root:
 *   BAD_USER_INPUT, message kept, since it says what to fix;
 * - anything else (an abstract type that did not resolve, a list that is not one): a fault of the
 *   gateway, masked as a resolver's error is, "Unexpected error." with INTERNAL_SERVER_ERROR, and
 *   logged.
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
  // Masked as Yoga masks a resolver's error: one whose original error is not a GraphQLError.
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
