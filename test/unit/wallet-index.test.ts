import { describe, expect, it } from 'vitest';
import { IndexBuilds } from '../../src/loaders/index-builds.ts';
import { agedPage, fingerprint, ListIndex, WalletIndexes } from '../../src/loaders/wallet-index.ts';
import type { Page } from '../../src/upstream/types.ts';

/** A merchant list held in memory, newest first, as the REST API pages it. */
function list(wallets: string[], length: number) {
  const items: { id: string; wallet: { id: string } }[] = [];
  const add = (i: number) =>
    items.unshift({ id: `d${i}`, wallet: { id: wallets[i % wallets.length] as string } });
  for (let i = 0; i < length; i++) add(i);
  const page = (request: { page: number; size: number }): Page<{ id: string; wallet: { id: string } }> => {
    const offset = (request.page - 1) * request.size;
    const data = items.slice(offset, offset + request.size);
    return {
      items: data,
      paging: {
        page: request.page,
        size: request.size,
        count: data.length,
        limit: request.size,
        totalCount: items.length,
        totalPages: Math.ceil(items.length / request.size),
      },
    } as unknown as Page<{ id: string; wallet: { id: string } }>;
  };
  return { items, page, add: () => add(items.length) };
}

describe('ListIndex', () => {
  it("absorbs pages in any order into each wallet's ascending ages, and checks what it knows", () => {
    const { page } = list(['a', 'b', 'c'], 2_500);
    const index = new ListIndex();
    // Oldest page first: 2,500 items → page 3 of 1000 holds ages 499..0.
    expect(index.absorb(agedPage(page({ page: 3, size: 1000 }), 2000))).toBe(true);
    expect(index.covered).toBe(500);
    // A page that does not continue the index adds nothing (ages 1499..500 would; 2499..1500 do not).
    expect(index.absorb(agedPage(page({ page: 1, size: 1000 }), 0))).toBe(true);
    expect(index.covered).toBe(500);
    expect(index.absorb(agedPage(page({ page: 2, size: 1000 }), 1000))).toBe(true);
    expect(index.absorb(agedPage(page({ page: 1, size: 1000 }), 0))).toBe(true);
    expect(index.covered).toBe(2_500);
    const ages = Array.from(index.agesOf('b'));
    expect(ages).toHaveLength(833);
    expect(ages.slice(0, 3)).toEqual([1, 4, 7]);
    expect(index.matches(4, { id: 'd4', wallet: { id: 'b' } })).toBe(true);
    expect(index.matches(4, { id: 'd5', wallet: { id: 'b' } })).toBe(false);
    expect(fingerprint('d4')).not.toBe(fingerprint('d5'));
  });

  it('an item that is not where the index says discards it; an older page (a cached one) does not', () => {
    const merchant = list(['a', 'b'], 300);
    const older = agedPage(merchant.page({ page: 1, size: 10 }), 0);
    merchant.add();
    merchant.add();
    const index = new ListIndex();
    expect(index.absorb(agedPage(merchant.page({ page: 1, size: 302 }), 0))).toBe(true);
    expect(index.covered).toBe(302);
    // Read before the last two arrived: its ages are exact for its own total, and agree.
    expect(index.absorb(older)).toBe(true);
    expect(index.discarded).toBeNull();
    const moved = agedPage(merchant.page({ page: 1, size: 10 }), 0);
    moved.items[3] = { age: moved.items[3]?.age as number, item: { id: 'other', wallet: { id: 'a' } } };
    expect(index.absorb(moved)).toBe(false);
    expect(index.discarded).toBe('moved');
  });
});

describe('IndexBuilds', () => {
  it('builds a list of 25,000 from the oldest end in about 25 calls, while items arrive', async () => {
    const merchant = list(['a', 'b', 'c', 'd'], 25_000);
    const indexes = new WalletIndexes(64 * 1024 * 1024);
    let calls = 0;
    const builds = new IndexBuilds({
      indexes,
      callsPerSecond: 10_000,
      read: async (_authorization, _list, request) => {
        calls++;
        // Ten new items arrive before every page the build reads.
        for (let i = 0; i < 10; i++) merchant.add();
        return merchant.page(request);
      },
    });
    builds.request('scope', 'deposits', 'Bearer k', 25_000);
    await builds.idle();
    const index = indexes.of('scope', 'deposits') as ListIndex;
    expect(index.discarded).toBeNull();
    expect(index.covered).toBeGreaterThanOrEqual(25_000);
    // 25,000 and the ~290 that arrived meanwhile, nearly 1000 a step, and a first step to find the drift.
    expect(calls).toBeLessThanOrEqual(30);
    // Every indexed age is right.
    const total = merchant.items.length;
    for (const age of [0, 1, 999, 1000, 12_345, index.covered - 1]) {
      expect(
        index.matches(age, merchant.items[total - 1 - age] as { id: string; wallet: { id: string } }),
      ).toBe(true);
    }
    const walletB = Array.from(index.agesOf('b'));
    expect(walletB.every((age, i) => i === 0 || age > (walletB[i - 1] as number))).toBe(true);
    expect(walletB.length).toBe(Math.floor(index.covered / 4) + (index.covered % 4 > 1 ? 1 : 0));
  });

  it('past a quarter of WALLET_INDEX_MAX_BYTES the list is not indexed, and stays so', async () => {
    const merchant = list(['a', 'b'], 20_000);
    const indexes = new WalletIndexes(64 * 1024);
    const builds = new IndexBuilds({
      indexes,
      callsPerSecond: 10_000,
      read: async (_a, _l, r) => merchant.page(r),
    });
    builds.request('scope', 'deposits', 'Bearer k', 20_000);
    await builds.idle();
    expect(indexes.of('scope', 'deposits')?.discarded).toBe('too-big');
    expect(indexes.heldBytes).toBeLessThanOrEqual(64 * 1024);
  });
});

describe('WalletIndexes.move', () => {
  it("hands a key's index to its merchant's name, bytes and all, and never over a built one", async () => {
    const merchant = list(['w1', 'w2'], 3_000);
    const indexes = new WalletIndexes(64 * 1024 * 1024);
    const builds = new IndexBuilds({
      indexes,
      callsPerSecond: 10_000,
      read: async (_a, _l, r) => merchant.page(r),
    });
    builds.request('scope-key', 'deposits', 'Bearer k', 3_000);
    await builds.idle();
    expect(indexes.ready('scope-key', 'deposits')).toBe(true);
    const ages = Array.from(indexes.of('scope-key', 'deposits')?.agesOf('w1') ?? []);
    indexes.move('scope-key', 'm.merchant');
    expect(indexes.ready('m.merchant', 'deposits')).toBe(true);
    expect(Array.from(indexes.of('m.merchant', 'deposits')?.agesOf('w1') ?? [])).toEqual(ages);
    expect(indexes.ready('scope-key', 'deposits')).toBe(false);
    // A second key's index does not replace the merchant's.
    builds.request('scope-other', 'deposits', 'Bearer k2', 3_000);
    await builds.idle();
    const theirs = indexes.of('m.merchant', 'deposits');
    indexes.move('scope-other', 'm.merchant');
    expect(indexes.of('m.merchant', 'deposits')).toBe(theirs);
  });
});
