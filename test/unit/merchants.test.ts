import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CallerScopes } from '../../src/upstream/caller-scope.ts';
import { type MerchantRecords, Merchants, REFRESH_MS } from '../../src/upstream/merchants.ts';

/**
 * Keys grouped by merchant from the wallets their answers name (src/upstream/merchants.ts): keys
 * of different merchants never share a group, whatever the order in which their answers arrive,
 * in one process or across replicas that share the fleet's records; keys of one merchant that
 * have seen a common wallet end in one group.
 */

/** The fleet's records as Redis keeps them (redis/merchant-records.ts): the least tag proposed per wallet. */
function memoryRecords(): MerchantRecords {
  const map = new Map<string, string>();
  return {
    async propose(walletTags, tag) {
      return walletTags.map((wallet) => {
        const before = map.get(wallet);
        if (before === undefined || tag < before) map.set(wallet, tag);
        return map.get(wallet) as string;
      });
    },
  };
}

/** Small bounds: an LRU allocates its whole bound up front. */
const KEPT = { keys: 100, wallets: 100 };
const MERCHANTS = 4;
const KEYS_PER_MERCHANT = 3;
const WALLETS_PER_MERCHANT = 4;
const wallet = (merchant: number, n: number) => `wallet-${merchant}-${n}`;
const scope = (merchant: number, key: number) => `scope-${merchant}-${key}`;

/** One answer: a key of a merchant names some of its wallets, on one of the replicas. */
const answer = fc.record({
  merchant: fc.integer({ min: 0, max: MERCHANTS - 1 }),
  key: fc.integer({ min: 0, max: KEYS_PER_MERCHANT - 1 }),
  wallets: fc.subarray(
    Array.from({ length: WALLETS_PER_MERCHANT }, (_, i) => i),
    { minLength: 0 },
  ),
  replica: fc.integer({ min: 0, max: 1 }),
  refused: fc.boolean(),
});

describe('merchants from the wallets answers name', () => {
  it('never groups keys of different merchants, whatever the order of answers, on one or two replicas', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(answer, { maxLength: 60 }), async (answers) => {
        const secret = Buffer.alloc(32, 7);
        const records = memoryRecords();
        let now = 0;
        const replicas = [0, 1].map(
          () => new Merchants(new CallerScopes(secret), { records, now: () => now, kept: KEPT }),
        );
        for (const a of answers) {
          const merchants = replicas[a.replica] as Merchants;
          const s = scope(a.merchant, a.key);
          if (a.refused) merchants.forget(s);
          else
            merchants.learn(
              s,
              a.wallets.map((n) => wallet(a.merchant, n)),
            );
          // Past the refresh: every answer is read.
          now += REFRESH_MS;
          await Promise.resolve();
        }
        for (const merchants of replicas) {
          const groups = new Map<string, number>();
          for (let m = 0; m < MERCHANTS; m++)
            for (let k = 0; k < KEYS_PER_MERCHANT; k++) {
              const group = merchants.of(scope(m, k));
              const owner = groups.get(group);
              if (owner !== undefined) expect(owner).toBe(m);
              groups.set(group, m);
              // A key of no known merchant is its own group, never another key's.
              if (!group.startsWith('m.')) expect(group).toBe(scope(m, k));
            }
        }
        // The records never hold another merchant's tag for a wallet.
        const tagsByMerchant = new Map<string, number>();
        for (const merchants of replicas)
          for (let m = 0; m < MERCHANTS; m++)
            for (let k = 0; k < KEYS_PER_MERCHANT; k++) {
              const group = merchants.of(scope(m, k));
              if (group.startsWith('m.')) tagsByMerchant.set(group, m);
            }
        for (const [group, m] of tagsByMerchant)
          for (const [other, n] of tagsByMerchant) if (group === other) expect(n).toBe(m);
      }),
      { numRuns: 100 },
    );
  });

  it("ends with one group for a merchant's keys once each has named a common wallet, on either replica", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(fc.integer({ min: 0, max: KEYS_PER_MERCHANT - 1 }), fc.integer({ min: 0, max: 1 })),
          {
            minLength: KEYS_PER_MERCHANT,
            maxLength: 12,
          },
        ),
        async (order) => {
          const records = memoryRecords();
          let now = 0;
          const replicas = [0, 1].map(
            () =>
              new Merchants(new CallerScopes(Buffer.alloc(32, 3)), { records, now: () => now, kept: KEPT }),
          );
          // Every key names wallet 0 and some other; each answer is learnt on one replica.
          for (const [i, [key, replica]] of order.entries()) {
            replicas[replica]?.learn(scope(0, key), [wallet(0, 0), wallet(0, 1 + (i % 3))]);
            now += REFRESH_MS;
            await new Promise((resolve) => setImmediate(resolve));
          }
          // Two more answers from each key on each replica, each past the refresh: the first
          // brings every replica the fleet's least tag, the second every key.
          for (let round = 0; round < 2; round++) {
            now += REFRESH_MS;
            for (const merchants of replicas)
              for (let key = 0; key < KEYS_PER_MERCHANT; key++)
                merchants.learn(scope(0, key), [wallet(0, 0)]);
            await new Promise((resolve) => setImmediate(resolve));
          }
          for (const merchants of replicas) {
            const groups = new Set(
              Array.from({ length: KEYS_PER_MERCHANT }, (_, key) => merchants.of(scope(0, key))),
            );
            expect(groups.size).toBe(1);
          }
          expect(replicas[0]?.of(scope(0, 0))).toBe(replicas[1]?.of(scope(0, 0)));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('names a merchant by an HMAC, never a wallet id, and a new secret forgets every group', () => {
    const scopes = new CallerScopes(Buffer.alloc(32, 1));
    const merchants = new Merchants(scopes);
    const group = merchants.learn('scope-a', ['wallet-secret-id']);
    expect(group).toMatch(/^m\.[A-Za-z0-9_-]{43}$/);
    expect(group).not.toContain('wallet-secret-id');
    expect(merchants.learn('scope-b', ['wallet-secret-id'])).toBe(group);
    scopes.useSecret(Buffer.alloc(32, 2));
    merchants.clear();
    expect(merchants.of('scope-a')).toBe('scope-a');
  });

  it('computes a wallet’s tag once per key, joins a wallet first named later at once; a refused key is no longer its merchant’s', () => {
    let tags = 0;
    const scopes = new CallerScopes(Buffer.alloc(32, 1));
    const counting = {
      tagOf: (id: string) => {
        tags++;
        return scopes.tagOf(id);
      },
    };
    let now = 0;
    const merchants = new Merchants(counting, { now: () => now, kept: KEPT });
    const group = merchants.learn('scope-a', ['w1', 'w2']);
    expect(tags).toBe(2);
    expect(merchants.learn('scope-a', ['w1', 'w2'])).toBe(group);
    expect(tags).toBe(2);
    // A wallet first named later (a new wallet, or one the first answer did not show) joins now.
    merchants.learn('scope-a', ['w2', 'w3']);
    expect(tags).toBe(3);
    now += REFRESH_MS;
    expect(merchants.learn('scope-a', ['w1', 'w3'])).toBe(merchants.of('scope-a'));
    expect(tags).toBe(3);
    // Another key naming only the later wallet is the same merchant's.
    expect(merchants.learn('scope-b', ['w3'])).toBe(merchants.of('scope-a'));
    merchants.forget('scope-a');
    expect(merchants.of('scope-a')).toBe('scope-a');
    expect(merchants.of('scope-b')).toMatch(/^m\./);
  });
});
