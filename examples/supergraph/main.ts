/**
 * `npm run example:supergraph`: this gateway as a subgraph of a small supergraph, served by Hive
 * Gateway (docs/supergraph.md). It starts, each on a free port of 127.0.0.1:
 *
 * 1. the gateway with FEDERATION=true and its embedded sandbox (what `npm start` runs);
 * 2. a second subgraph, "labels", that adds `Wallet.label` and hands out wallet references;
 * 3. Hive Gateway, composed from both (the gateway's SDL read with `_service { sdl }`), which
 *    forwards each client's `Authorization` to both subgraphs;
 *
 * then prints the router's URL and a query to try, and runs until Ctrl+C. ROUTER_PORT (default
 * 4100) is the router's port.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { DEMO_KEYS } from '../../src/sandbox/seed.ts';
import { compose, type Labels, startLabelsSubgraph, startRouter, subgraphSdl } from './supergraph.ts';

const KEY = DEMO_KEYS.acmeReadWrite;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startGateway(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: new URL('../..', import.meta.url),
    env: { ...process.env, FEDERATION: 'true', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const ready = `http://127.0.0.1:${port}/readyz`;
  for (let tries = 0; tries < 300; tries++) {
    if (child.exitCode !== null) throw new Error(`the gateway exited with ${child.exitCode}`);
    const ok = await fetch(ready).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return child;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill();
  throw new Error('the gateway did not become ready within 30 s');
}

const gatewayPort = await freePort();
const gateway = await startGateway(gatewayPort);
const gatewayURL = `http://127.0.0.1:${gatewayPort}/graphql`;

// The labels service knows the demo merchant's wallets: a label for the first, the others as favourites.
const listed = await fetch(gatewayURL, {
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
  body: JSON.stringify({ query: '{ wallets(first: 10) { nodes { id } } }' }),
});
const wallets = ((await listed.json()) as { data: { wallets: { nodes: { id: string }[] } } }).data.wallets
  .nodes;
const labels: Labels = {
  labels: new Map(wallets.slice(0, 1).map((w) => [w.id, 'Payouts'])),
  favouriteWallets: wallets.slice(1).map((w) => w.id),
  recentDeposits: [],
};
const labelsSubgraph = await startLabelsSubgraph(labels);
const supergraph = compose({ sdl: await subgraphSdl(gatewayURL, KEY), url: gatewayURL }, labelsSubgraph.url);
const router = await startRouter(supergraph, Number(process.env.ROUTER_PORT ?? 4100));

console.log(`
Supergraph: ${router.url} (Hive Gateway)
  subgraph "wallets": ${gatewayURL} (this gateway, FEDERATION=true, embedded sandbox)
  subgraph "labels":  ${labelsSubgraph.url}

Try:
  curl -s ${router.url} -H 'content-type: application/json' \\
    -H 'authorization: Bearer ${KEY}' \\
    -d '{"query":"{ wallets(first: 5) { nodes { restId address label } } favouriteWallets { restId assets { currencyCode balance { availableAmount } } } }"}'

Ctrl+C stops all three.`);

const stop = async () => {
  await router.close();
  labelsSubgraph.server.closeAllConnections();
  labelsSubgraph.server.close();
  gateway.kill('SIGTERM');
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
