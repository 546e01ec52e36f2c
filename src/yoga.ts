import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { useDisableIntrospection } from '@graphql-yoga/plugin-disable-introspection';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import { createContextFactory, type GatewayContext } from './context.ts';
import { type IdempotencyStore, MemoryIdempotencyStore } from './idempotency.ts';
import { useAuthentication, useRefuseKeyInURL } from './plugins/authentication.ts';
import { useEagerStringify } from './plugins/eager-stringify.ts';
import { useErrorLogging } from './plugins/error-logging.ts';
import { useHealthChecks } from './plugins/health.ts';
import {
  DEFAULT_QUERY_LIMITS,
  type QueryLimits,
  useMaxRequestBytes,
  useQueryLimits,
} from './plugins/limits.ts';
import { useOperationStatus } from './plugins/operation-status.ts';
import { useQueryDeduplication } from './plugins/query-deduplication.ts';
import { requestIdOf, useRequestId } from './plugins/request-id.ts';
import { schema } from './schema/index.ts';
import type { MerchantWalletClient } from './upstream/client.ts';
import { WithdrawalService } from './withdrawals.ts';

export interface GatewayDeps {
  client: MerchantWalletClient;
  logger: Logger;
  /** GraphiQL at /graphql for browsers; false turns it off. */
  graphiql: false | { defaultQuery?: string; defaultAuthorization?: string };
  /** Schema introspection; off also hides field suggestions. Default: on. */
  introspection?: boolean;
  limits?: Partial<QueryLimits>;
  maxRequestBytes?: number;
  /** Time budget of one GraphQL request for all its upstream calls, retries included. Default 15 s. */
  requestDeadlineMs?: number;
  /** Where idempotency keys of createWithdrawalIntent are kept; default: this process's memory. */
  idempotencyStore?: IdempotencyStore;
  /** Identical concurrent queries of one caller share one execution (useQueryDeduplication). Default: on. */
  queryDeduplication?: boolean;
}

export type Gateway = YogaServerInstance<Record<string, unknown>, GatewayContext>;

/** The whole GraphQL gateway as one fetch-style handler; tests call `gateway.fetch` directly. */
export function createGateway(deps: GatewayDeps): Gateway {
  const withdrawals = new WithdrawalService(
    deps.client,
    deps.idempotencyStore ?? new MemoryIdempotencyStore(),
  );
  const createContext = createContextFactory({
    ...deps,
    withdrawals,
    requestDeadlineMs: deps.requestDeadlineMs ?? 15_000,
  });
  const graphiql = deps.graphiql;
  const introspection = deps.introspection ?? true;
  const limits = { ...DEFAULT_QUERY_LIMITS, blockFieldSuggestions: !introspection, ...deps.limits };
  return createYoga<Record<string, unknown>, GatewayContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    context: ({ request, params }) =>
      createContext({ request, params, requestId: requestIdOf(request) } as Parameters<
        typeof createContext
      >[0]),
    logging: deps.logger,
    maskedErrors: true,
    graphiql: graphiql
      ? {
          title: 'Merchant Wallet GraphQL',
          defaultQuery: graphiql.defaultQuery,
          headers: graphiql.defaultAuthorization
            ? JSON.stringify({ Authorization: graphiql.defaultAuthorization }, null, 2)
            : undefined,
          shouldPersistHeaders: false,
        }
      : false,
    renderGraphiQL,
    // useMaxRequestBytes below enforces MAX_REQUEST_BYTES, chunked bodies included.
    maxRequestBodySize: false,
    // One operation per request: batching would multiply every limit below.
    batching: false,
    plugins: [
      useRefuseKeyInURL(),
      useMaxRequestBytes(deps.maxRequestBytes ?? 100_000),
      useRequestId(),
      useHealthChecks(() => deps.client.ping()),
      // Browsers may send "simple" requests (GET, form posts) cross-site without a preflight:
      // those must carry a custom header. JSON POSTs are preflighted and pass.
      useCSRFPrevention({ requestHeaders: ['x-graphql-csrf', 'x-graphql-yoga-csrf'] }),
      ...(introspection ? [] : [useDisableIntrospection()]),
      ...useQueryLimits(limits),
      useAuthentication(),
      useOperationStatus(),
      useErrorLogging(),
      // After the plugins that may change a result: it serialises the result they have finished with.
      useEagerStringify(),
      // Last: a request joins another's execution only once every check above has passed for it.
      ...(deps.queryDeduplication === false
        ? []
        : [
            useQueryDeduplication({
              sharingScope: (context) => (context.auth ? deps.client.sharingScope(context.caller) : null),
            }),
          ]),
    ],
  });
}
