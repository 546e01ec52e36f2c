import { expect, it } from 'vitest';
import { IndexBuilds } from '../../src/loaders/index-builds.ts';
import { WalletIndexes } from '../../src/loaders/wallet-index.ts';
import type { Page } from '../../src/upstream/types.ts';

// a merchant with more than 65,535 wallets is built again at every ask.
it('after "too-many-wallets", the next ask does not read the whole list again', async () => {
  const length = 70_000;
  const items = Array.from({ length }, (_, i) => ({
    id: `d${length - i}`,
    wallet: { id: `w${length - i}` },
  }));
  const page = (r: { page: number; size: number }) => {
    const data = items.slice((r.page - 1) * r.size, r.page * r.size);
    return {
      items: data,
      paging: { page: r.page, size: r.size, totalCount: length, totalPages: Math.ceil(length / r.size) },
    } as unknown as Page<{ id: string; wallet: { id: string } }>;
  };
  const indexes = new WalletIndexes(256 * 1024 * 1024);
  let calls = 0;
  const builds = new IndexBuilds({
    indexes,
    callsPerSecond: 100_000,
    read: async (_a, _l, r) => {
      calls++;
      return page(r);
    },
  });
  builds.request('s', 'deposits', 'k', length);
  await builds.idle();
  const first = calls;
  // What a request does next: syncIndex calls of(), finds an empty index, walks, and asks again.
  indexes.of('s', 'deposits');
  builds.request('s', 'deposits', 'k', length);
  await builds.idle();
  expect(calls - first).toBe(0);
});
