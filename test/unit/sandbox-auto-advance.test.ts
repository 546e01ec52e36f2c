import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startAutoAdvance } from '../../src/sandbox/auto-advance.ts';
import { Money } from '../../src/sandbox/money.ts';
import type { WithdrawalRecord } from '../../src/sandbox/store/records.ts';
import { SandboxStore } from '../../src/sandbox/store/store.ts';

// The sandbox's auto-advance on simulated time: every deposit and intent keeps its own clock (one
// step per `stepMs` after its last change), however many others are open, and moves only through
// the store's transition methods, so balances lock, unlock and settle as they do through the admin API.

const STEP = 8_000;
const START = Date.parse('2026-11-24T12:00:00.000Z');
const EXTERNAL = 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7';

let store: SandboxStore;
let stop: () => void = () => {};

beforeEach(() => {
  // Date and setInterval only: the store's clock and the auto-advance's timer, nothing else.
  vi.useFakeTimers({ now: START, toFake: ['Date', 'setInterval', 'clearInterval'] });
  store = new SandboxStore();
});
afterEach(() => {
  stop();
  vi.useRealTimers();
});

function merchantWithWallet(usdt = '1000000') {
  const merchant = store.createMerchant('Test merchant', {
    fee: new Money('1'),
    dailyLimit: new Money('1000000'),
    monthlyLimit: new Money('10000000'),
  });
  const wallet = store.createWallet(merchant.id, { USDT: new Money(usdt), TRX: new Money('10') });
  return { merchant, wallet };
}

function withdraw(merchantId: string, walletId: string, amount = '10'): WithdrawalRecord {
  return store.createWithdrawal(merchantId, {
    senderWalletId: walletId,
    serviceFeeMode: 'exclusive',
    currencyCode: 'USDT',
    amount: new Money(amount),
    destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL },
  });
}

/** The statuses `read()` goes through while simulated time moves on by `totalMs`, one second at a time. */
function watch(read: () => string, totalMs: number): { status: string; at: number }[] {
  const seen = [{ status: read(), at: Date.now() }];
  for (let elapsed = 0; elapsed < totalMs; elapsed += 1_000) {
    vi.advanceTimersByTime(1_000);
    const status = read();
    if (status !== seen.at(-1)?.status) seen.push({ status, at: Date.now() });
  }
  return seen;
}

describe('auto-advance: every item on its own clock', () => {
  it('takes a new intent from preparing to completed within 30 s, even behind 50 older open ones', () => {
    const { merchant, wallet } = merchantWithWallet();
    stop = startAutoAdvance(store, { stepMs: STEP });
    const older = Array.from({ length: 50 }, () => withdraw(merchant.id, wallet.id));
    vi.advanceTimersByTime(3_000);
    const created = Date.now();
    const intent = withdraw(merchant.id, wallet.id, '25');

    const seen = watch(() => intent.status, 30_000);
    expect(seen.map((s) => s.status)).toEqual(['preparing', 'reviewing', 'pending', 'completed']);
    // One step per STEP after its own last change (found within a second), never sooner.
    let previous = created;
    for (const { at } of seen.slice(1)) {
      expect(at - previous).toBeGreaterThanOrEqual(STEP);
      expect(at - previous).toBeLessThanOrEqual(STEP + 1_000);
      previous = at;
    }
    expect(Date.parse(intent.finalizedAt ?? '') - created).toBeLessThanOrEqual(30_000);
    // The older ones finished on their own clocks too, before it.
    expect(older.every((o) => o.status === 'completed')).toBe(true);
    expect(store.openWithdrawals()).toEqual([]);
  });

  it('moves intents through the store: each completion releases exactly its locked gross amount', () => {
    const { merchant, wallet } = merchantWithWallet('1000');
    stop = startAutoAdvance(store, { stepMs: STEP });
    withdraw(merchant.id, wallet.id, '100');
    vi.advanceTimersByTime(5_000);
    withdraw(merchant.id, wallet.id, '200');
    const usdt = () => wallet.assets.get('USDT');
    // Gross = amount + the 1 USDT fee, locked at creation.
    expect([usdt()?.available.toString(), usdt()?.locked.toString()]).toEqual(['698', '302']);
    // The first intent completes at 3 steps (24 s, found within a second), the second 5 s later.
    vi.advanceTimersByTime(3 * STEP - 5_000 + 1_000);
    expect([usdt()?.available.toString(), usdt()?.locked.toString()]).toEqual(['698', '201']);
    vi.advanceTimersByTime(5_000);
    expect([usdt()?.available.toString(), usdt()?.locked.toString()]).toEqual(['698', '0']);
  });

  it('takes a deposit from pending through processing to completed on its own clock, crediting it once', () => {
    const { wallet } = merchantWithWallet('0');
    stop = startAutoAdvance(store, { stepMs: STEP });
    vi.advanceTimersByTime(2_500);
    const created = Date.now();
    const deposit = store.createDeposit(wallet.id, {
      currencyCode: 'USDT',
      amount: new Money('50'),
      amountFee: new Money('0.5'),
      status: 'pending',
    });
    const seen = watch(() => deposit.status, 20_000);
    expect(seen.map((s) => s.status)).toEqual(['pending', 'processing', 'completed']);
    expect(Date.parse(deposit.finalizedAt ?? '') - created).toBeGreaterThanOrEqual(2 * STEP);
    expect(Date.parse(deposit.finalizedAt ?? '') - created).toBeLessThanOrEqual(2 * STEP + 2_000);
    expect(wallet.assets.get('USDT')?.available.toString()).toBe('49.5');
    expect(store.openDeposits()).toEqual([]);
  });

  it('spreads the first steps of items already open at start over one step, instead of all at once', () => {
    const { merchant, wallet } = merchantWithWallet();
    // An old backlog, as the seeded world has: months since their last change.
    store.now = () => new Date(START - 90 * 86_400_000);
    const backlog = Array.from({ length: 40 }, () => withdraw(merchant.id, wallet.id));
    store.now = () => new Date();
    stop = startAutoAdvance(store, { stepMs: STEP });
    const moved = () => backlog.filter((i) => i.status !== 'preparing').length;
    vi.advanceTimersByTime(1_000);
    expect(moved()).toBeGreaterThan(0);
    expect(moved()).toBeLessThanOrEqual(10);
    vi.advanceTimersByTime(STEP - 1_000);
    expect(backlog.map((i) => i.status)).toEqual(backlog.map(() => 'reviewing'));
  });

  it('leaves an intent held until read alone until its first read by id, then walks it from that read', () => {
    const { merchant, wallet } = merchantWithWallet();
    stop = startAutoAdvance(store, { stepMs: STEP });
    const held = withdraw(merchant.id, wallet.id);
    store.holdUntilRead(held.id);
    vi.advanceTimersByTime(10 * 60_000);
    expect(held.status).toBe('preparing');
    // Lists do not release it; a read by id (GET /withdrawal-intents/{id}) does.
    store.listWithdrawals(merchant.id, 1, 10);
    vi.advanceTimersByTime(STEP + 1_000);
    expect(held.status).toBe('preparing');
    const read = Date.now();
    store.getWithdrawal(merchant.id, held.id);
    const seen = watch(() => held.status, 30_000);
    expect(seen.map((s) => s.status)).toEqual(['preparing', 'reviewing', 'pending', 'completed']);
    expect((seen[1]?.at ?? 0) - read).toBeGreaterThanOrEqual(STEP);
    expect((seen[3]?.at ?? 0) - read).toBeLessThanOrEqual(3 * STEP + 3_000);
  });

  it('stops when asked', () => {
    const { merchant, wallet } = merchantWithWallet();
    stop = startAutoAdvance(store, { stepMs: STEP });
    const intent = withdraw(merchant.id, wallet.id);
    stop();
    vi.advanceTimersByTime(60_000);
    expect(intent.status).toBe('preparing');
  });
});
