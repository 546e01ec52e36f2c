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

/**
 * The first error of a key the REST API refused, without its path: a refused key fails the whole
 * operation, so it is answered as a missing key is (`data: null`, one UNAUTHENTICATED error, 401),
 * not as one error per root field beside a `data` full of nulls. One shape for every 401.
 */
function refusedKey(result: ExecutionResult): GraphQLError | undefined {
  const error = result.errors?.find((e) => codeOf(e) === 'UNAUTHENTICATED');
  if (!error) return undefined;
  const original = error.originalError;
  return new GatewayError('UNAUTHENTICATED', error.message, {
    ...(isGatewayError(original) && original.upstream && { upstream: original.upstream }),
  });
}

/**
 * A key the REST API refused answers as a missing one does (see refusedKey).
 * With partial data the HTTP status stays 200 (GraphQL over HTTP). When every root field failed:
 * - a refused key (401/403) sets the HTTP status for every client;
 * - for `application/graphql-response+json`, all errors RATE_LIMITED answer 429, and all
 *   UPSTREAM_UNAVAILABLE/UPSTREAM_TIMEOUT answer 503 (504 when every one timed out), with
 *   `Retry-After` when an error knows the delay (the REST API's own Retry-After, an open circuit).
 * So HTTP-level clients, proxies and load balancers see what happened (OPERATION_HTTP_STATUS).
 */
export function useOperationStatus(): Plugin<GatewayContext> {
  return {
    // A stream cannot change its HTTP status once open: each event refused for its key gets the
    // same body as a refused request (data null, one UNAUTHENTICATED error without a path).
    onSubscribe() {
      return {
        onSubscribeResult({ result, setResult }) {
          // Refused before the stream began (the first read): one result, not a stream.
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
