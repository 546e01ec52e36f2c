import { expect, it } from 'vitest';
import { IndexBuilds } from '../../src/loaders/index-builds.ts';
import { INDEX_CHUNK, type IndexChunk, WalletIndexes } from '../../src/loaders/wallet-index.ts';
import type { IndexChunkStore } from '../../src/redis/wallet-index-chunks.ts';

// chunks loaded from the fleet's copy are all added before the bound is checked.
it('an index loaded from the fleet never holds more than a quarter of WALLET_INDEX_MAX_BYTES', async () => {
  const maxBytes = 1024 * 1024;
  const chunk: IndexChunk = {
    walletIds: ['a', 'b'],
    ordinals: new Uint16Array(INDEX_CHUNK).map((_, i) => i % 2),
    fingerprints: new Uint32Array(INDEX_CHUNK),
  };
  const store: IndexChunkStore = {
    load: async (_scope, _list, _from, most) => {
      const all = Array.from({ length: Math.min(2000, most) }, () => chunk);

      return { generation: 0, chunks: all };
    },
    save: async () => {},
    drop: async () => {},
  };
  const indexes = new WalletIndexes(maxBytes);
  let peak = 0;
  const resize = indexes.resize.bind(indexes);
  indexes.resize = (index) => {
    peak = Math.max(peak, index.bytes);
    resize(index);
  };
  const builds = new IndexBuilds({
    indexes,
    chunks: store,
    callsPerSecond: 100_000,
    read: async () => {
      throw new Error('no REST in this test');
    },
  });
  builds.request('s', 'deposits', 'k', 3_000_000);
  await builds.idle();
  expect(peak).toBeLessThanOrEqual(maxBytes / 4);
});
