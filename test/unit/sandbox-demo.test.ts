import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startAutoAdvance } from '../../src/sandbox/auto-advance.ts';
import { createDemoWithdrawal, startDemoActivity } from '../../src/sandbox/demo.ts';
import { Money } from '../../src/sandbox/money.ts';
import { SandboxStore } from '../../src/sandbox/store/store.ts';

// The demo world's news on simulated time: a small USDT deposit every so often on one of the demo
// merchant's wallets, which the auto-advance then completes on its own clock; and the demo
// withdrawal that GraphiQL's WatchWithdrawal tab opens on.

const START = Date.parse('2026-11-24T12:00:00.000Z');
const EVERY = 25_000;

let store: SandboxStore;
const stops: (() => void)[] = [];

beforeEach(() => {
  vi.useFakeTimers({ now: START, toFake: ['Date', 'setInterval', 'clearInterval'] });
  store = new SandboxStore();
});
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
  vi.useRealTimers();
});

function world() {
  const config = { fee: new Money('1.5'), dailyLimit: new Money('50000'), monthlyLimit: new Money('500000') };
  const acme = store.createMerchant('Acme Coffee', config);
  const other = store.createMerchant('Globex Travel', config);
  const wallets = [0, 1, 2].map(() => store.createWallet(acme.id, { USDT: new Money('1000') }));
  const otherWallet = store.createWallet(other.id, { USDT: new Money('1000') });
  return { acme, other, wallets, otherWallet };
}

describe('new deposits for the demo merchant', () => {
  it('arrive every interval, pending, a small USDT amount on one of its wallets', () => {
    const { acme, wallets } = world();
    stops.push(startDemoActivity(store, { merchantId: acme.id, everyMs: EVERY }));
    vi.advanceTimersByTime(EVERY - 1);
    expect(store.deposits.size).toBe(0);
    vi.advanceTimersByTime(1);
    expect(store.deposits.size).toBe(1);
    const [deposit] = store.deposits.values();
    expect(deposit).toMatchObject({ merchantId: acme.id, status: 'pending', currencyCode: 'USDT' });
    expect(wallets.map((w) => w.id)).toContain(deposit?.walletId);
    expect(deposit?.createdAt).toBe(new Date(START + EVERY).toISOString());
    const amount = deposit?.amount ?? new Money(0);
    expect(amount.gte(5) && amount.lte(250) && amount.decimalPlaces() <= 2).toBe(true);
    // The seeded world's fee: 1 %, to the cent.
    expect(deposit?.amountFee.toString()).toBe(amount.times('0.01').toDecimalPlaces(2).toString());

    vi.advanceTimersByTime(9 * EVERY);
    const all = [...store.deposits.values()];
    expect(all).toHaveLength(10);
    expect(all.every((d) => d.merchantId === acme.id && d.status === 'pending')).toBe(true);
    // Randomly spread: not one wallet, not one amount.
    expect(new Set(all.map((d) => d.walletId)).size).toBeGreaterThan(1);
    expect(new Set(all.map((d) => d.amount.toString())).size).toBeGreaterThan(1);
  });

  it('then complete on their own clock and credit their wallet exactly their net amount', () => {
    const { acme, wallets } = world();
    stops.push(startDemoActivity(store, { merchantId: acme.id, everyMs: EVERY }));
    stops.push(startAutoAdvance(store, { stepMs: 8_000 }));
    const total = () =>
      wallets.reduce((sum, w) => sum.plus(w.assets.get('USDT')?.available ?? 0), new Money(0));
    vi.advanceTimersByTime(EVERY);
    const [deposit] = store.deposits.values();
    // pending → processing at 8 s, → completed at 16 s.
    vi.advanceTimersByTime(15_000);
    expect(deposit?.status).toBe('processing');
    expect(total().toString()).toBe('3000');
    vi.advanceTimersByTime(1_000);
    expect(deposit?.status).toBe('completed');
    expect(total().toString()).toBe(new Money(3000).plus(deposit?.amountNet ?? 0).toString());
  });

  it('with withdrawTo, bring a small withdrawal every second time, through the money rules', () => {
    const { acme, wallets } = world();
    const to = 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7';
    stops.push(startDemoActivity(store, { merchantId: acme.id, everyMs: EVERY, withdrawTo: to }));
    vi.advanceTimersByTime(EVERY);
    expect(store.withdrawals.size).toBe(0);
    vi.advanceTimersByTime(EVERY);
    expect(store.withdrawals.size).toBe(1);
    const [intent] = store.withdrawals.values();
    expect(intent).toMatchObject({ merchantId: acme.id, status: 'preparing', currencyCode: 'USDT' });
    const amount = intent?.amount ?? new Money(0);
    expect(amount.gte(1) && amount.lte(20) && amount.decimalPlaces() <= 2).toBe(true);
    const wallet = wallets.find((w) => w.id === intent?.walletId);
    expect(wallet?.assets.get('USDT')?.locked.toString()).toBe(intent?.amountGross.toString());
    vi.advanceTimersByTime(8 * EVERY);
    expect(store.withdrawals.size).toBe(5);
    expect(store.deposits.size).toBe(10);
  });

  it('skip a withdrawal the wallet cannot pay, changing nothing', () => {
    const { acme, wallets } = world();
    for (const wallet of wallets) {
      const usdt = wallet.assets.get('USDT');
      if (usdt) usdt.available = new Money(0);
    }
    stops.push(
      startDemoActivity(store, {
        merchantId: acme.id,
        everyMs: EVERY,
        withdrawTo: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
      }),
    );
    vi.advanceTimersByTime(2 * EVERY);
    expect(store.withdrawals.size).toBe(0);
    expect(wallets.every((w) => w.assets.get('USDT')?.locked.toString() === '0')).toBe(true);
  });

  it('stop when asked', () => {
    const { acme } = world();
    const stop = startDemoActivity(store, { merchantId: acme.id, everyMs: EVERY });
    vi.advanceTimersByTime(EVERY);
    stop();
    vi.advanceTimersByTime(10 * EVERY);
    expect(store.deposits.size).toBe(1);
  });
});

describe('the demo withdrawal', () => {
  it('is a new intent of the merchant, its gross amount locked, held in preparing until read by id', () => {
    const { acme, wallets } = world();
    const wallet = wallets[0];
    if (!wallet) throw new Error('no wallet');
    stops.push(startAutoAdvance(store, { stepMs: 8_000 }));
    const intent = createDemoWithdrawal(store, acme.id, wallet.id, 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7');
    expect(intent).toMatchObject({ merchantId: acme.id, walletId: wallet.id, status: 'preparing' });
    expect(wallet.assets.get('USDT')?.locked.toString()).toBe(intent.amountGross.toString());
    vi.advanceTimersByTime(30 * 60_000);
    expect(intent.status).toBe('preparing');
    store.getWithdrawal(acme.id, intent.id);
    vi.advanceTimersByTime(30_000);
    expect(intent.status).toBe('completed');
    expect(wallet.assets.get('USDT')?.locked.toString()).toBe('0');
  });

  it('is refused by the money rules like any other withdrawal', () => {
    const { acme } = world();
    const poor = store.createWallet(acme.id, { USDT: new Money('1') });
    expect(() => createDemoWithdrawal(store, acme.id, poor.id, 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7')).toThrow(
      /balance/i,
    );
    expect(store.withdrawals.size).toBe(0);
  });
});
