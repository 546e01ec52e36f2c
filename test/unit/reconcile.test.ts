import { describe, expect, it } from 'vitest';
import type { CreateWithdrawalIntentBody, WithdrawalIntentDTO } from '../../src/upstream/types.ts';
import type { Submission } from '../../src/withdrawals/idempotency-store.ts';
import { StoreFullError } from '../../src/withdrawals/idempotency-store.ts';
import {
  MERCHANT_KEYS_FACTOR,
  MemoryIdempotencyStore,
} from '../../src/withdrawals/memory-idempotency-store.ts';
import {
  decide,
  payoutOf,
  type ReconcileSettings,
  readWindow,
  windowOf,
} from '../../src/withdrawals/reconcile.ts';

const settings: ReconcileSettings = { clockAllowanceMs: 1_000, lateCommitMs: 500, pageSize: 100 };
const T = Date.parse('2026-11-24T10:00:00.000Z');

const body: CreateWithdrawalIntentBody = {
  senderWalletId: 'w-1',
  serviceFeeMode: 'exclusive',
  currencyCode: 'USDT',
  amount: '10.5',
  destination: { type: 'crypto', rail: 'tron', identifier: 'TAddr' },
};

function intent(
  id: string,
  createdAt: number,
  overrides: Partial<WithdrawalIntentDTO> = {},
): WithdrawalIntentDTO {
  return {
    id,
    wallet: { id: 'w-1', type: 'merchant_wallet' },
    transaction: null,
    destination: { type: 'crypto', rail: 'tron', routingCode: 'tron:mainnet', identifier: 'TAddr' },
    status: 'preparing',
    serviceFeeMode: 'exclusive',
    amount: '10.5000000000000000',
    amountFee: '1.0000000000000000',
    amountNet: '10.5000000000000000',
    amountGross: '11.5000000000000000',
    submittedAt: new Date(createdAt).toISOString(),
    finalizedAt: null,
    createdAt: new Date(createdAt).toISOString(),
    updatedAt: new Date(createdAt).toISOString(),
    ...overrides,
  };
}

const mine: Submission = { id: 'a-1', owner: 'key:s:k', sentAt: T, endsBy: T + 10_000, endedAt: T + 2_000 };

describe('the window of a submission', () => {
  it('runs from the send less the clock allowance to the end of waiting plus both allowances', () => {
    expect(windowOf(mine, settings)).toEqual({ from: T - 1_000, to: T + 3_500, closesAt: T + 2_500 });
    // A process that died mid-attempt never recorded its end: the deadline bounds it.
    expect(windowOf({ ...mine, endedAt: null }, settings).closesAt).toBe(T + 10_500);
  });
});

describe('decide', () => {
  const judge = (
    intents: WithdrawalIntentDTO[],
    owners = new Map<string, string>(),
    others: Submission[] = [],
  ) => decide(mine, body, intents, owners, others, settings, T + 5_000);

  it('the one unclaimed matching intent inside the window is the submission’s', () => {
    const found = intent('i-1', T + 100);
    expect(judge([found, intent('other-amount', T + 50, { amount: '10.6' })])).toEqual({
      kind: 'found',
      intent: found,
    });
  });

  it('nothing matching inside the window: none, so sending again is safe', () => {
    expect(judge([intent('too-early', T - 1_001), intent('too-late', T + 3_501)])).toEqual({ kind: 'none' });
    expect(judge([intent('other-wallet', T, { wallet: { id: 'w-2', type: 'merchant_wallet' } })])).toEqual({
      kind: 'none',
    });
    expect(judge([intent('other-mode', T, { serviceFeeMode: 'inclusive' })])).toEqual({ kind: 'none' });
    expect(
      judge([
        intent('other-address', T, {
          destination: { type: 'crypto', rail: 'tron', routingCode: 'x', identifier: 'TOther' },
        }),
      ]),
    ).toEqual({ kind: 'none' });
    // Everything the payout hashes that an intent carries: the same address on another rail is another payout.
    expect(
      judge([
        intent('other-rail', T, {
          destination: { type: 'crypto', rail: 'ethereum', routingCode: 'x', identifier: 'TAddr' },
        }),
        intent('other-type', T, {
          destination: { type: 'bank', rail: 'tron', routingCode: 'x', identifier: 'TAddr' },
        }),
      ]),
    ).toEqual({ kind: 'none' });
  });

  it('an intent claimed by someone else is never a candidate; one claimed by this owner is the answer', () => {
    const taken = intent('i-1', T + 100);
    expect(judge([taken], new Map([['i-1', 'key:s:other']]))).toEqual({ kind: 'none' });
    expect(judge([taken, intent('i-2', T + 200)], new Map([['i-1', mine.owner]]))).toEqual({
      kind: 'found',
      intent: taken,
    });
  });

  it('two unclaimed candidates: ambiguous, with both', () => {
    expect(judge([intent('i-1', T + 100), intent('i-2', T + 200)])).toEqual({
      kind: 'ambiguous',
      reason: 'SEVERAL_CANDIDATES',
      candidates: ['i-1', 'i-2'],
      retryAfterMs: null,
    });
  });

  it('a rival submission whose window holds the candidate: ambiguous; retry after it settles when it is in flight', () => {
    const candidate = intent('i-1', T + 100);
    const ended: Submission = {
      id: 'a-2',
      owner: 'unkeyed:x',
      sentAt: T,
      endsBy: T + 10_000,
      endedAt: T + 300,
    };
    expect(judge([candidate], new Map(), [mine, ended])).toEqual({
      kind: 'ambiguous',
      reason: 'COMPETING_ATTEMPT',
      candidates: ['i-1'],
      retryAfterMs: null,
    });
    const inFlight: Submission = { ...ended, endedAt: null, endsBy: T + 6_000 };
    expect(judge([candidate], new Map(), [inFlight])).toMatchObject({ retryAfterMs: 6_000 + 500 - 5_000 });
    // A rival whose window cannot hold the candidate is no rival.
    const later: Submission = { ...ended, sentAt: T + 5_000, endedAt: T + 5_100 };
    expect(judge([candidate], new Map(), [later])).toEqual({ kind: 'found', intent: candidate });
  });
});

describe('decide after the store lost its data', () => {
  it('a single candidate made before the loss was seen (within the clock allowance) is not vouched for', () => {
    const candidate = intent('i-1', T + 100);
    const judge = (since: number) =>
      decide(mine, body, [candidate], new Map(), [], settings, T + 5_000, since);
    expect(judge(T + 500)).toEqual({
      kind: 'ambiguous',
      reason: 'REGISTRY_RESET',
      candidates: ['i-1'],
      retryAfterMs: null,
    });
    // Made more than the clock allowance after the loss: its claim, if any, would be there.
    expect(judge(T - 1_000)).toEqual({ kind: 'found', intent: candidate });
    expect(judge(Number.NEGATIVE_INFINITY)).toEqual({ kind: 'found', intent: candidate });
  });
});

describe('payoutOf', () => {
  it('names the content: the same for an equal amount written otherwise, different for another payout', () => {
    expect(payoutOf({ ...body, amount: '10.50' })).toBe(payoutOf(body));
    expect(payoutOf({ ...body, amount: '10.51' })).not.toBe(payoutOf(body));
    expect(payoutOf({ ...body, senderWalletId: 'w-2' })).not.toBe(payoutOf(body));
  });
});

describe('MemoryIdempotencyStore bounds', () => {
  const pending = { state: 'pending' as const, fingerprint: 'f', startedAt: 0 };

  it('refuses a new key past its caller’s bound or the store’s, and never evicts', async () => {
    let now = T;
    const store = new MemoryIdempotencyStore({ maxKeys: 3, maxKeysPerCaller: 2 }, () => now);
    expect(await store.claim('a', 'k1', pending, 1_000, 'h')).toBeNull();
    expect(await store.claim('a', 'k2', pending, 1_000, 'h')).toBeNull();
    await expect(store.claim('a', 'k3', pending, 1_000, 'h')).rejects.toEqual(new StoreFullError('caller'));
    expect(await store.claim('b', 'k1', pending, 1_000, 'h')).toBeNull();
    await expect(store.claim('c', 'k1', pending, 1_000, 'h')).rejects.toEqual(new StoreFullError('store'));
    // Every record is still there.
    expect((await store.read('a', 'k1'))?.record).toEqual(pending);
    // Forgetting makes room; so does expiry after 24 h.
    expect(await store.settle('b', 'k1', 'h', pending, null)).toBe(true);
    expect(await store.claim('c', 'k1', pending, 1_000, 'h')).toBeNull();
    now += 24 * 60 * 60 * 1000 + 1;
    expect(store.size).toBe(0);
    expect(await store.claim('a', 'k3', pending, 1_000, 'h')).toBeNull();
  });

  it("bounds a merchant's keys together at MERCHANT_KEYS_FACTOR times one key's bound, each key still at its own", async () => {
    const store = new MemoryIdempotencyStore({
      maxKeys: 100,
      maxKeysPerCaller: 2,
      // Keys a1…a9 are one merchant's; b1 another's.
      groupOf: (scope) => (scope.startsWith('a') ? 'm.A' : scope),
    });
    const full = 2 * MERCHANT_KEYS_FACTOR;
    for (let n = 0; n < full; n++)
      expect(await store.claim(`a${1 + (n >> 1)}`, `k${n}`, pending, 1_000, 'h')).toBeNull();
    // Each key at its own bound, and the merchant at its: a sibling key is refused, another merchant is not.
    await expect(store.claim('a1', 'k-next', pending, 1_000, 'h')).rejects.toEqual(
      new StoreFullError('caller'),
    );
    await expect(store.claim('a9', 'k0', pending, 1_000, 'h')).rejects.toEqual(new StoreFullError('caller'));
    expect(await store.claim('b1', 'k0', pending, 1_000, 'h')).toBeNull();
    // A refusal of the merchant's makes room for any of its keys.
    expect(
      await store.settle('a1', 'k0', 'h', pending, {
        state: 'refused',
        fingerprint: 'f',
        startedAt: 0,
        code: 'withdrawal_intent.balance_insufficient',
        message: 'no',
      }),
    ).toBe(true);
    expect(await store.claim('a9', 'k0', pending, 1_000, 'h')).toBeNull();
    expect(await store.read('a1', 'k0')).toBeNull();
  });

  it('claims an intent for one owner only', async () => {
    const store = new MemoryIdempotencyStore({ maxKeys: 10, maxKeysPerCaller: 10 });
    expect(await store.claimIntent('i-1', 'key:a:k')).toBeNull();
    expect(await store.claimIntent('i-1', 'key:a:k')).toBeNull();
    expect(await store.claimIntent('i-1', 'unkeyed:x')).toBe('key:a:k');
    expect(await store.intentOwners(['i-1', 'i-2'])).toEqual(new Map([['i-1', 'key:a:k']]));
  });
});

describe('readWindow', () => {
  /** A list of `count` intents one second apart, newest first, served in pages; counts the pages read. */
  function list(count: number, order: 'newest-first' | 'shuffled' = 'newest-first') {
    const all = Array.from({ length: count }, (_, i) => intent(`i-${i}`, T + (count - i) * 1_000));
    if (order === 'shuffled') all.reverse();
    const pages: number[] = [];
    const client = {
      async listWithdrawalIntents(_caller: unknown, params: { page: number; size: number }) {
        pages.push(params.page);
        const items = all.slice((params.page - 1) * params.size, params.page * params.size);
        return { items, paging: { totalPages: Math.ceil(count / params.size) } };
      },
    } as unknown as Parameters<typeof readWindow>[0];
    return { client, pages };
  }
  const caller = {} as Parameters<typeof readWindow>[1];

  it('reads page after page until a page reaches past the window start', async () => {
    const { client, pages } = list(250);
    // From 130 s after T: the 120 newest intents (created at T+131 s … T+250 s) and nothing older.
    const read = await readWindow(client, caller, { from: T + 130_500, to: T + 300_000 }, 100, 50);
    expect(pages).toEqual([1, 2]);
    expect(read.complete).toBe(true);
    expect(read.items).toHaveLength(120);
  });

  it('skips the intents made after the window, however many: a binary search finds where it begins', async () => {
    // 6,000 intents one second apart; the window holds the 21 made between T+100 s and T+120 s.
    const { client, pages } = list(6_000);
    const read = await readWindow(client, caller, { from: T + 100_000, to: T + 120_000 }, 100, 50);
    expect(read.complete).toBe(true);
    expect(read.items.map((i) => Date.parse(i.createdAt) - T).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 21 }, (_, i) => (100 + i) * 1_000),
    );
    // Page 1, about log2(60) probes, then the one or two pages that hold the window.
    expect(pages.length).toBeLessThanOrEqual(10);
    expect(pages[0]).toBe(1);
  });

  it('reads to the end of a list that is not newest first, and says incomplete when the pages run out', async () => {
    const shuffled = list(250, 'shuffled');
    const all = await readWindow(shuffled.client, caller, { from: T + 130_500, to: T + 300_000 }, 100, 50);
    expect(shuffled.pages).toEqual([1, 2, 3]);
    expect(all).toMatchObject({ complete: true });
    expect(all.items).toHaveLength(120);
    const short = list(250, 'shuffled');
    expect(
      await readWindow(short.client, caller, { from: T + 130_500, to: T + 300_000 }, 100, 2),
    ).toMatchObject({
      complete: false,
    });
  });
});

describe('MemoryIdempotencyStore fencing', () => {
  it('a holder paused past its lease and overtaken changes nothing; the new holder settles', async () => {
    let now = T;
    const store = new MemoryIdempotencyStore({ maxKeys: 10, maxKeysPerCaller: 10 }, () => now);
    const first = { state: 'pending' as const, fingerprint: 'f', startedAt: T };
    expect(await store.claim('s', 'k', first, 1_000, 'paused')).toBeNull();
    now += 1_001;
    const next = { ...first };
    expect(await store.takeOver('s', 'k', first, next, 1_000, 'new')).toBe(true);
    // The paused holder wakes up: its writes are refused.
    expect(await store.update('s', 'k', { ...first, startedAt: 1 }, 'paused')).toBe(false);
    expect(await store.settle('s', 'k', 'paused', first, null)).toBe(false);
    expect(await store.read('s', 'k')).toEqual({ record: next, leased: true });
    // The holder settles; a lease that ran out with nobody taking over still lets it, once.
    now += 1_001;
    const refused = { state: 'refused' as const, fingerprint: 'f', startedAt: T, code: 'c', message: 'm' };
    expect(await store.settle('s', 'k', 'new', next, refused)).toBe(true);
    expect(await store.settle('s', 'k', 'new', next, null)).toBe(false);
    expect(await store.read('s', 'k')).toEqual({ record: refused, leased: false });
  });
});
