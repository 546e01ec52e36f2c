/**
 * Hive Gateway's configuration for the generated peer: the composed supergraph, and the caller's
 * Authorization header passed on to every REST call (the REST API scopes everything to the key).
 * Everything else is Hive Gateway's default, as a team would start with.
 */
import { defineConfig } from '@graphql-hive/gateway';

export const gatewayConfig = defineConfig({
  supergraph: './supergraph.graphql',
  propagateHeaders: {
    fromClientToSubgraphs: ({ request }) => {
      const authorization = request.headers.get('authorization');
      return authorization ? { authorization } : {};
    },
  },
});
