import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IndexBuilds } from '../../../src/loaders/index-builds.ts';
import { INDEX_CHUNK, type ListIndex, WalletIndexes } from '../../../src/loaders/wallet-index.ts';
import { connectRedis, type RedisClient } from '../../../src/redis/connection.ts';
import { decodeChunk, encodeChunk, redisIndexChunks } from '../../../src/redis/wallet-index-chunks.ts';
import type { Page } from '../../../src/upstream/types.ts';
import { type RunningRedis, startRedis } from '../../support/redis.ts';

/**
 * Replicas share merchants' wallet indexes through a real Redis: what one built, another loads
 * instead of reading the merchant's list again; a contradiction makes every replica start over.
 */

type Item = { id: string; wallet: { id: string } };
const LENGTH = 25_000;
const items: Item[] = [];
for (let i = 0; i < LENGTH; i++) items.unshift({ id: `d${i}`, wallet: { id: `w${(i * 7) % 5}` } });
const page = (request: { page: number; size: number }): Page<Item> => {
  const offset = (request.page - 1) * request.size;
  const data = items.slice(offset, offset + request.size);
  return { items: data, paging: { totalCount: items.length } } as unknown as Page<Item>;
};

let redis: RunningRedis;
let client: RedisClient;
const logger = pino({ level: 'silent' });

beforeAll(async () => {
  redis = await startRedis();
  client = await connectRedis(redis.url, logger);
});
afterAll(async () => {
  client?.disconnect();
  await redis?.close();
});

/** One replica's indexes and builds, counting the REST calls its builds make. */
function replica() {
  const indexes = new WalletIndexes(64 * 1024 * 1024);
  const counter = { calls: 0 };
  const builds = new IndexBuilds({
    indexes,
    callsPerSecond: 10_000,
    chunks: redisIndexChunks(client, logger),
    read: async (_authorization, _list, request) => {
      counter.calls++;
      return page(request);
    },
  });
  return { indexes, builds, counter };
}

describe('wallet indexes shared by the fleet', () => {
  it('a replica loads what another built: 1 REST call instead of 25, and the same index', async () => {
    const a = replica();
    a.builds.request('scope-1', 'deposits', 'Bearer k', LENGTH);
    await a.builds.idle();
    expect(a.counter.calls).toBeGreaterThanOrEqual(25);
    const keys = await client.keys('mwg:{scope-1}:windex:deposits:*');
    expect(keys).toHaveLength(Math.floor(LENGTH / INDEX_CHUNK));

    const b = replica();
    b.builds.request('scope-1', 'deposits', 'Bearer k', LENGTH);
    await b.builds.idle();
    // The chunks (24 × 1024 ages), then the last 424 ages from the REST API.
    expect(b.counter.calls).toBe(1);
    const mine = a.indexes.of('scope-1', 'deposits') as ListIndex;
    const theirs = b.indexes.of('scope-1', 'deposits') as ListIndex;
    expect(theirs.covered).toBe(LENGTH);
    for (const wallet of ['w0', 'w1', 'w2', 'w3', 'w4']) {
      expect(Array.from(theirs.agesOf(wallet))).toEqual(Array.from(mine.agesOf(wallet)));
    }
    for (const age of [0, 1023, 1024, 20_000, LENGTH - 1]) {
      expect(theirs.matches(age, items[LENGTH - 1 - age] as Item)).toBe(true);
    }
  });

  it('after a contradiction no replica loads the old copy', async () => {
    const a = replica();
    a.builds.request('scope-2', 'deposits', 'Bearer k', LENGTH);
    await a.builds.idle();
    a.builds.contradicted('scope-2', 'deposits', 'Bearer k', LENGTH);
    await a.builds.idle();
    const b = replica();
    b.builds.request('scope-2', 'deposits', 'Bearer k', LENGTH);
    await b.builds.idle();
    // B found the new generation's chunks A wrote while building again, not the old ones.
    expect(Number(await client.get('mwg:{scope-2}:windex:deposits:gen'))).toBe(1);
    expect(await client.keys('mwg:{scope-2}:windex:deposits:1:*')).toHaveLength(
      Math.floor(LENGTH / INDEX_CHUNK),
    );
    expect(b.counter.calls).toBe(1);
  });

  it('a chunk that is not whole or not this format is not used (the index is built from the REST API)', async () => {
    const a = replica();
    a.builds.request('scope-3', 'deposits', 'Bearer k', LENGTH);
    await a.builds.idle();
    const chunk = (a.indexes.of('scope-3', 'deposits') as ListIndex).chunk(0);
    expect(chunk && decodeChunk(encodeChunk(chunk))).toEqual(chunk);
    const encoded = JSON.parse(encodeChunk(chunk as NonNullable<typeof chunk>)) as Record<string, unknown>;
    expect(decodeChunk(JSON.stringify({ ...encoded, v: 2 }))).toBeNull();
    expect(decodeChunk(JSON.stringify({ ...encoded, d: 'AAAA' }))).toBeNull();
    expect(decodeChunk(JSON.stringify({ ...encoded, w: [] }))).toBeNull();
    expect(decodeChunk('not json')).toBeNull();
    await client.set('mwg:{scope-3}:windex:deposits:0:0', 'garbage');
    const b = replica();
    b.builds.request('scope-3', 'deposits', 'Bearer k', LENGTH);
    await b.builds.idle();
    expect(b.counter.calls).toBeGreaterThanOrEqual(25);
    expect((b.indexes.of('scope-3', 'deposits') as ListIndex).covered).toBe(LENGTH);
  });
});
