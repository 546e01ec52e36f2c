import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import { createContextFactory, type GatewayContext } from './context.ts';
import { useAuthentication, useRefuseKeyInURL } from './plugins/authentication.ts';
import { useErrorLogging } from './plugins/error-logging.ts';
import { useHealthChecks } from './plugins/health.ts';
import { useOperationStatus } from './plugins/operation-status.ts';
import { requestIdOf, useRequestId } from './plugins/request-id.ts';
import { schema } from './schema/index.ts';
import type { MerchantWalletClient } from './upstream/client.ts';

export interface GatewayDeps {
  client: MerchantWalletClient;
  logger: Logger;
  /** GraphiQL at /graphql for browsers; false turns it off. */
  graphiql: false | { defaultQuery?: string; defaultAuthorization?: string };
}

export type Gateway = YogaServerInstance<Record<string, unknown>, GatewayContext>;

/** The whole GraphQL gateway as one fetch-style handler; tests call `gateway.fetch` directly. */
export function createGateway(deps: GatewayDeps): Gateway {
  const createContext = createContextFactory(deps);
  const graphiql = deps.graphiql;
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
    plugins: [
      useRefuseKeyInURL(),
      useRequestId(),
      useHealthChecks(() => deps.client.ping()),
      useAuthentication(),
      useOperationStatus(),
      useErrorLogging(),
    ],
  });
}
