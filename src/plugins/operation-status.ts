import type { ExecutionResult, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../context.ts';
import type { ErrorCode } from '../errors/error-codes.ts';
import { GatewayError, isGatewayError, OPERATION_HTTP_STATUS } from '../errors/errors.ts';

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
 * Whether Yoga will answer `application/graphql-response+json`: the first entry of Accept that a
 * JSON result can take decides, and a wildcard gets `application/json` (Yoga's own negotiation).
 */
export function answersGraphQLResponseJson(request: Request): boolean {
  for (const entry of (request.headers.get('accept') ?? '*/*').toLowerCase().split(',')) {
    const [type = '', ...params] = entry.split(';').map((part) => part.trim());
    if (params.some((p) => p.startsWith('charset=') && p !== 'charset=utf-8')) continue;
    if (type === 'application/graphql-response+json') return true;
    if (type === 'application/json' || type === 'application/*' || type === '*/*') return false;
  }
  return false;
}

/** The first error of a key the REST API refused, without its path: the whole operation's answer. */
function refusedKey(result: ExecutionResult): GraphQLError | undefined {
  const error = result.errors?.find((e) => codeOf(e) === 'UNAUTHENTICATED');
  if (!error) return undefined;
  const original = error.originalError;
  return new GatewayError('UNAUTHENTICATED', error.message, {
    ...(isGatewayError(original) && original.upstream && { upstream: original.upstream }),
  });
}

/**
 * The HTTP status of an operation (docs/errors.md): a key the REST API refused answers as a missing
 * one (`data: null`, one UNAUTHENTICATED error, 401). Otherwise 200 with partial data; when every
 * root field failed, OPERATION_HTTP_STATUS's: an `always` status (403) for every client, and for
 * `application/graphql-response+json` 429, 504 or 503 when every error agrees (with `Retry-After`
 * when an error knows the delay).
 */
export function useOperationStatus(): Plugin<GatewayContext> {
  return {
    // A stream's status is sent: each event refused for its key gets a refused request's body.
    onSubscribe() {
      return {
        onSubscribeResult({ result, setResult }) {
          if (!(Symbol.asyncIterator in result)) {
            const refused = refusedKey(result);
            if (refused) setResult({ data: null, errors: [refused] });
            return undefined;
          }
          return {
            onNext({ result, setResult }) {
              const refused = refusedKey(result);
              if (refused) setResult({ data: null, errors: [refused] });
            },
          };
        },
      };
    },
    onExecute({ args }) {
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          const refused = refusedKey(result);
          if (refused) {
            setResult({
              data: null,
              errors: [refused],
              extensions: { ...result.extensions, http: { status: 401 } },
            });
            return;
          }
          if (!failedWhole(result)) return;
          const errors = (result.errors ?? []) as GraphQLError[];
          const rules = errors.map((e) => OPERATION_HTTP_STATUS[codeOf(e) as ErrorCode]);
          let status = Math.max(0, ...rules.map((rule) => (rule?.always ? rule.status : 0)));
          if (!status && answersGraphQLResponseJson(args.contextValue.request)) {
            const statuses = rules.map((rule) => (rule && !rule.always ? rule.status : 0));
            if (statuses.every((s) => s === 429)) status = 429;
            else if (statuses.every((s) => s === 504)) status = 504;
            else if (statuses.every((s) => s === 503 || s === 504)) status = 503;
          }
          if (!status) return;
          const retryAfter = Math.max(0, ...errors.map((e) => Number(e.extensions?.retryAfterSeconds) || 0));
          const http = {
            status,
            ...(retryAfter > 0 && status >= 429 && { headers: { 'retry-after': String(retryAfter) } }),
          };
          setResult({ ...result, extensions: { ...result.extensions, http } });
        },
      };
    },
  };
}
