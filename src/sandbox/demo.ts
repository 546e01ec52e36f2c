import type { Logger } from 'pino';
import { Money } from './money.ts';
import type { DepositRecord, WithdrawalRecord } from './store/records.ts';
import type { SandboxStore } from './store/store.ts';

/**
 * News for a demo world, made through the store like any other record (so every money rule
 * applies): a new deposit for a merchant every so often and a small withdrawal every other time,
 * and the demo withdrawal GraphiQL's WatchWithdrawal tab opens on. The auto-advance (auto-advance.ts) then moves both on.
 */

/** The demo withdrawal's amount, in USDT (the merchant's fee is charged on top). */
export const DEMO_WITHDRAWAL_AMOUNT = '25';

/** A random whole number in [0, n), from the store's randomness (seeded while seeding, then live). */
function pick(store: SandboxStore, n: number): number {
  return store.random(4).reduce((acc, byte) => acc * 256 + byte, 0) % n;
}

/**
 * One new pending USDT deposit for the merchant, on one of its active wallets picked at random:
 * between 5.00 and 250.00 USDT, with the seeded world's 1 % fee. Null when it has no active wallet.
 */
export function newDemoDeposit(store: SandboxStore, merchantId: string): DepositRecord | null {
  const wallets = [...store.wallets.values()].filter(
    (w) => w.merchantId === merchantId && w.status === 'active',
  );
  const wallet = wallets[pick(store, wallets.length || 1)];
  if (!wallet) return null;
  const amount = new Money(500 + pick(store, 24_501)).div(100);
  return store.createDeposit(wallet.id, {
    currencyCode: 'USDT',
    amount,
    amountFee: amount.times('0.01').toDecimalPlaces(2),
    status: 'pending',
  });
}

/**
 * One new withdrawal for the merchant of 1.00 to 20.00 USDT (fee exclusive) to `destination`, from
 * one of its active wallets picked at random, through the store's rules. Null when that wallet
 * cannot pay it (the store refuses, as the REST API would): a demo never forces a balance.
 */
export function newDemoWithdrawal(
  store: SandboxStore,
  merchantId: string,
  destination: string,
): WithdrawalRecord | null {
  const wallets = [...store.wallets.values()].filter(
    (w) => w.merchantId === merchantId && w.status === 'active',
  );
  const wallet = wallets[pick(store, wallets.length || 1)];
  if (!wallet) return null;
  try {
    return store.createWithdrawal(merchantId, {
      senderWalletId: wallet.id,
      serviceFeeMode: 'exclusive',
      currencyCode: 'USDT',
      amount: new Money(100 + pick(store, 1_901)).div(100),
      destination: { type: 'crypto', rail: 'tron', identifier: destination },
    });
  } catch {
    return null;
  }
}

/**
 * News for the merchant's live screens: a new deposit every `everyMs` (newDemoDeposit) and, with
 * `withdrawTo`, a new small withdrawal every second time (newDemoWithdrawal), so GraphiQL's
 * LiveDeposits and LiveWithdrawals tabs show something within a minute of being run. The
 * auto-advance, if on, moves each on its own clock. Returns a function that stops it.
 */
export function startDemoActivity(
  store: SandboxStore,
  options: { merchantId: string; everyMs: number; withdrawTo?: string; logger?: Logger },
): () => void {
  if (!(options.everyMs > 0)) throw new RangeError(`everyMs must be > 0; received ${options.everyMs}`);
  let ticks = 0;
  const timer = setInterval(() => {
    ticks += 1;
    const deposit = newDemoDeposit(store, options.merchantId);
    if (deposit) options.logger?.debug({ depositId: deposit.id }, 'sandbox new deposit');
    if (options.withdrawTo === undefined || ticks % 2 !== 0) return;
    const intent = newDemoWithdrawal(store, options.merchantId, options.withdrawTo);
    if (intent) options.logger?.debug({ intentId: intent.id }, 'sandbox new withdrawal');
  }, options.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * A new withdrawal intent of DEMO_WITHDRAWAL_AMOUNT USDT (fee exclusive) from the wallet to
 * `destination`, through the store's withdrawal rules (so it locks its gross amount, and a wallet
 * that cannot cover it refuses with the REST API's error), then held in preparing until its first
 * read by id: whoever first watches it, however long after start, sees it walk to completed.
 */
export function createDemoWithdrawal(
  store: SandboxStore,
  merchantId: string,
  walletId: string,
  destination: string,
): WithdrawalRecord {
  const intent = store.createWithdrawal(merchantId, {
    senderWalletId: walletId,
    serviceFeeMode: 'exclusive',
    currencyCode: 'USDT',
    amount: new Money(DEMO_WITHDRAWAL_AMOUNT),
    destination: { type: 'crypto', rail: 'tron', identifier: destination },
  });
  store.holdUntilRead(intent.id);
  return intent;
}
