import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { createYoga } from 'graphql-yoga';

/**
 * A small supergraph around the gateway, as a platform team would build one (docs/supergraph.md):
 * a second subgraph, "labels", that adds `label` to our `Wallet` and hands out `Wallet` and
 * `Deposit` references, composed with the gateway's subgraph SDL (`_service { sdl }`) by
 * @theguild/federation-composition, and served by Hive Gateway, which forwards the client's
 * `Authorization` header to the gateway's subgraph, and to no other. Used by `npm run example:supergraph` and by
 * test/integration/supergraph/supergraph.test.ts.
 */

/** What the labels subgraph knows: a label per wallet global id, and the references it hands out. */
export interface Labels {
  labels: Map<string, string>;
  favouriteWallets: string[];
  recentDeposits: string[];
  /** Requests it got that carried an Authorization header: a merchant's key must never reach it. */
  sawAuthorization?: number;
}

const LABELS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])

  type Wallet @key(fields: "id") {
    id: ID!
    "A name the merchant gave the wallet, kept by the labels service."
    label: String
  }

  type Deposit @key(fields: "id", resolvable: false) {
    id: ID!
  }

  type Query {
    "Wallets the merchant marked as favourites: references the wallet subgraph resolves."
    favouriteWallets: [Wallet!]!
    "Deposits the labels service noted lately."
    recentDeposits: [Deposit!]!
  }
`;

/** The labels subgraph on a free port of 127.0.0.1. */
export async function startLabelsSubgraph(labels: Labels): Promise<{ url: string; server: Server }> {
  const schema = buildSubgraphSchema([
    {
      typeDefs: parse(LABELS_SDL),
      resolvers: {
        Query: {
          favouriteWallets: () => labels.favouriteWallets.map((id) => ({ id })),
          recentDeposits: () => labels.recentDeposits.map((id) => ({ id })),
        },
        Wallet: {
          __resolveReference: (reference: { id: string }) => ({ id: reference.id }),
          label: (wallet: { id: string }) => labels.labels.get(wallet.id) ?? null,
        },
      },
    },
  ]);
  const yoga = createYoga({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    logging: false,
    context: ({ request }) => {
      if (request.headers.has('authorization')) labels.sawAuthorization = (labels.sawAuthorization ?? 0) + 1;
      return {};
    },
  });
  const server = createServer(yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`, server };
}

/** The gateway's subgraph SDL, as a router's composition reads it: `{ _service { sdl } }`. */
export async function subgraphSdl(gatewayURL: string, apiKey?: string): Promise<string> {
  const response = await fetch(gatewayURL, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(apiKey && { authorization: `Bearer ${apiKey}` }),
    },
    body: JSON.stringify({ query: '{ _service { sdl } }' }),
  });
  const body = (await response.json()) as { data?: { _service?: { sdl?: string } }; errors?: unknown };
  const sdl = body.data?._service?.sdl;
  if (!sdl) throw new Error(`no subgraph SDL from ${gatewayURL}: ${JSON.stringify(body.errors)}`);
  return sdl;
}

/** Composes the two subgraphs; throws with composition's errors when they do not compose. */
export function compose(wallets: { sdl: string; url: string }, labelsURL: string): string {
  const result = composeServices([
    { name: 'wallets', typeDefs: parse(wallets.sdl), url: wallets.url },
    { name: 'labels', typeDefs: parse(LABELS_SDL), url: labelsURL },
  ]);
  if (result.errors?.length || !result.supergraphSdl) {
    throw new Error(`composition failed: ${result.errors?.map((error) => error.message).join('; ')}`);
  }
  return result.supergraphSdl;
}

/**
 * Hive Gateway serving `supergraph` on a free port of 127.0.0.1, forwarding the client's
 * `Authorization` (with `X-Request-Id` and `traceparent`) to the wallets subgraph only: the
 * gateway has no key of its own, and no other subgraph may ever see a merchant's API key.
 */
export async function startRouter(
  supergraph: string,
  port = 0,
): Promise<{ url: string; close(): Promise<void> }> {
  const router = createGatewayRuntime({
    supergraph,
    logging: false,
    propagateHeaders: {
      fromClientToSubgraphs: ({ request, subgraphName }) =>
        subgraphName === 'wallets'
          ? {
              authorization: request.headers.get('authorization'),
              'x-request-id': request.headers.get('x-request-id'),
              traceparent: request.headers.get('traceparent'),
            }
          : {},
    },
  });
  const server = createServer(router);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await router.dispose();
    },
  };
}
