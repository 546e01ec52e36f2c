import { expect, it } from 'vitest';
import { IndexBuilds } from '../../src/loaders/index-builds.ts';
import { WalletIndexes } from '../../src/loaders/wallet-index.ts';
import type { Page } from '../../src/upstream/types.ts';

// two long builds hold both slots; a short one waits for one to end.
function list(length: number) {
  const items = Array.from({ length }, (_, i) => ({ id: `d${length - i}`, wallet: { id: `w${i % 3}` } }));
  return (r: { page: number; size: number }) => {
    const data = items.slice((r.page - 1) * r.size, r.page * r.size);
    return {
      items: data,
      paging: { page: r.page, size: r.size, totalCount: length, totalPages: Math.ceil(length / r.size) },
    } as unknown as Page<{ id: string; wallet: { id: string } }>;
  };
}

it('a merchant asking after two long builds is not starved by them', async () => {
  const pages: Record<string, ReturnType<typeof list>> = {
    big1: list(200_000),
    big2: list(200_000),
    small: list(2_000),
  };
  const order: string[] = [];
  const builds = new IndexBuilds({
    indexes: new WalletIndexes(256 * 1024 * 1024),
    callsPerSecond: 100_000,
    read: async (authorization, _l, r) => {
      order.push(authorization);
      return (pages[authorization] as ReturnType<typeof list>)(r);
    },
  });
  builds.request('big1', 'deposits', 'big1', 200_000);
  builds.request('big2', 'deposits', 'big2', 200_000);
  builds.request('small', 'deposits', 'small', 2_000);
  await builds.idle();
  const before = order.indexOf('small');
  expect(before).toBeLessThan(10);
});
