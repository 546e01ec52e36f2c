/**
 * GraphQL Mesh composition of the REST API's OpenAPI document, as the Mesh docs set it up: one
 * OpenAPI subgraph, nothing hand-written. The REST base URL is read when the gateway runs
 * (`MW_REST_URL`, interpolated by Mesh's REST transport per call), so one composed supergraph
 * serves whichever sandbox the benchmark started. test/bench/peer.ts composes it when it is missing
 * or stale; `npm run compose` here does the same by hand.
 */
import { defineConfig } from '@graphql-mesh/compose-cli';
import { loadOpenAPISubgraph } from '@omnigraph/openapi';

export const composeConfig = defineConfig({
  subgraphs: [
    {
      sourceHandler: loadOpenAPISubgraph('MerchantWallet', {
        source: './openapi.yaml',
        endpoint: '{env.MW_REST_URL}',
      }),
    },
  ],
  output: 'supergraph.graphql',
});
