/**
 * The benchmark's baseline: a hand-written REST client, as a small HTTP server of the same kind as
 * the gateway (Node, one process), that serves each benchmark screen with the fewest REST calls
 * that return the same data. It knows the screens; the gateway does not.
 *
 *   UPSTREAM_URL=http://127.0.0.1:8080 node test/bench/optimal-server.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const upstream = new URL(process.env.UPSTREAM_URL ?? 'http://127.0.0.1:8080');
const pool = new Pool(upstream.origin, { connections: 64, headersTimeout: 10_000, bodyTimeout: 10_000 });

async function get(auth: string, path: string) {
  const response = await pool.request({
    method: 'GET',
    path: `/external/v1${path}`,
    headers: { authorization: auth },
  });
  const body = (await response.body.json()) as { data: unknown };
  if (response.statusCode !== 200) throw new Error(`GET ${path}: ${response.statusCode}`);
  return body.data;
}

type Wallet = { id: string; networkEndpoint: { identifier: string } };
type Item = { id: string; wallet: { id: string } };

const screens: Record<
  string,
  (auth: string, url: URL, body: string, idempotencyKey?: string) => Promise<unknown>
> = {
  // S1: one list call.
  '/s1': async (auth) => ({ wallets: await get(auth, '/wallets?page=1&size=20') }),
  // S2: the deposits page, then the wallet list once for every wallet they reference.
  '/s2': async (auth) => {
    const deposits = (await get(auth, '/deposits?page=1&size=50')) as Item[];
    const wallets = new Map(
      ((await get(auth, '/wallets?page=1&size=1000')) as Wallet[]).map((w) => [w.id, w]),
    );
    return deposits.map((d) => ({ ...d, address: wallets.get(d.wallet.id)?.networkEndpoint.identifier }));
  },
  // S3: the wallet, and the merchant's latest 1000 deposits and intents filtered by hand (no
  // wallet filter in REST), all three in parallel.
  '/s3': async (auth, url) => {
    const id = url.searchParams.get('wallet') ?? '';
    const [wallet, deposits, intents] = await Promise.all([
      get(auth, `/wallets/${encodeURIComponent(id)}`),
      get(auth, '/deposits?page=1&size=1000') as Promise<Item[]>,
      get(auth, '/withdrawal-intents?page=1&size=1000') as Promise<Item[]>,
    ]);
    return {
      wallet,
      deposits: deposits.filter((d) => d.wallet.id === id).slice(0, 10),
      withdrawalIntents: intents.filter((w) => w.wallet.id === id).slice(0, 10),
    };
  },
  // A wallet's first page of deposits (20): the merchant's latest 1000, filtered by hand.
  '/s5': async (auth, url) => {
    const id = url.searchParams.get('wallet') ?? '';
    const deposits = (await get(auth, '/deposits?page=1&size=1000')) as Item[];
    return deposits.filter((d) => d.wallet.id === id).slice(0, 20);
  },
  // A withdrawal's status: one call.
  '/s6': async (auth, url) =>
    get(auth, `/withdrawal-intents/${encodeURIComponent(url.searchParams.get('id') ?? '')}`),
  // S4: one POST (with the caller's Idempotency-Key, when it sends one).
  '/s4': async (auth, _url, body, idempotencyKey) => {
    const response = await pool.request({
      method: 'POST',
      path: '/external/v1/withdrawal-intents',
      headers: {
        authorization: auth,
        'content-type': 'application/json',
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
      body,
    });
    return response.body.json();
  },
};

const server = createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://optimal');
  const screen = screens[url.pathname];
  if (!screen) {
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    const idempotencyKey = req.headers['idempotency-key'];
    const result = await screen(
      req.headers.authorization ?? '',
      url,
      Buffer.concat(chunks).toString(),
      typeof idempotencyKey === 'string' ? idempotencyKey : undefined,
    );
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
  } catch (error) {
    res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(error) }));
  }
});
server.listen(0, '127.0.0.1', () => {
  console.log(`optimal client at http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
process.once('SIGTERM', () => server.close(() => pool.close().then(() => process.exit(0))));
