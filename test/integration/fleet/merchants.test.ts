import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, type RedisClient } from '../../../src/redis/connection.ts';
import { bigMerchant } from '../../support/big-merchant.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { type RunningRedis, startRedis } from '../../support/redis.ts';

/**
 * Two replicas, one real Redis: a merchant's keys are one merchant on both (the same tag, from the
 * fleet's records), and what one replica built for the merchant with one key, the other loads
 * for another key instead of reading the merchant's list again.
 */

const FIRST_KEY = 'mw_test_fleet_merchants_first_key';
const DEPOSITS = 20_000;
let random = 5;
const world = bigMerchant({
  key: FIRST_KEY,
  wallets: 3,
  deposits: DEPOSITS,
  walletOf: (i) => {
    if (i < 10) return 0;
    random = (Math.imul(random, 1_103_515_245) + 12_345) >>> 0;
    return 1 + ((random >>> 16) % 2);
  },
});
const [quiet] = world.wallets as [string, ...string[]];
const SECOND_KEY = world.store.createApiKey(world.merchantId, 'mobile', 'read_write').key;

let redis: RunningRedis;
const connections: RedisClient[] = [];
let a: TestGateway;
let b: TestGateway;

beforeAll(async () => {
  redis = await startRedis();
  const replica = async () => {
    const connection = await connectRedis(redis.url, pino({ level: 'silent' }));
    connections.push(connection);
    // Both replicas' sandboxes serve the one store: one REST API behind the fleet.
    return startTestGateway({ store: world.store, infrastructure: { redis: connection } });
  };
  a = await replica();
  b = await replica();
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  for (const connection of connections) connection.disconnect();
  await redis?.close();
});

const screen = (gw: TestGateway, key: string) =>
  gw.request(`{ wallet(id: "${quiet}") { deposits(first: 10) { nodes { restId } } } }`, {}, { key });
const merchantOf = (gw: TestGateway, key: string) =>
  gw.client.merchants.of(gw.client.scopeOf(`Bearer ${key}`));

describe("a merchant's keys across a fleet", () => {
  it('one replica builds the index with one key; the other loads it for another key, and both name the merchant alike', async () => {
    const first = await screen(a, FIRST_KEY);
    expect(first.body.errors).toBeUndefined();
    await a.runtime.walletIndexing?.builds.idle();
    const built = a.runtime.walletIndexing?.builds.calls ?? 0;
    expect(built).toBeGreaterThanOrEqual(DEPOSITS / 1000);
    const tag = merchantOf(a, FIRST_KEY);
    expect(tag).toMatch(/^m\./);
    const admin = connections[0] as RedisClient;
    expect(await admin.keys(`mwg:{${tag}}:windex:deposits:*`)).not.toHaveLength(0);
    // Neither a wallet id nor a key is stored: the records are HMACs.
    const records = await admin.keys('mwg:mwallet:*');
    expect(records.length).toBeGreaterThanOrEqual(world.wallets.length);
    for (const record of records) for (const id of world.wallets) expect(record).not.toContain(id);

    const second = await screen(b, SECOND_KEY);
    expect(second.body.errors).toBeUndefined();
    const ids = (second.body.data as { wallet: { deposits: { nodes: { restId: string }[] } } }).wallet
      .deposits.nodes;
    expect(ids.map((n) => n.restId)).toEqual(world.truth.get(quiet));
    await b.runtime.walletIndexing?.builds.idle();
    expect(merchantOf(b, SECOND_KEY)).toBe(tag);
    // Replica b built the merchant's index from a's chunks: a call or two for the newest ages,
    // not the 20 a's build made.
    expect(b.runtime.walletIndexing?.builds.calls).toBeLessThanOrEqual(2);
    expect(b.runtime.walletIndexing?.indexes.ready(tag, 'deposits')).toBe(true);
  });
});
