import { Money } from '../../src/sandbox/money.ts';
import { SandboxStore } from '../../src/sandbox/store/store.ts';

/**
 * A sandbox store holding one merchant with a long history, built straight into the store (a
 * 40,000-deposit world in well under a second), for the wallet-list tests: `walletOf(i)` says
 * which wallet the i-th deposit (oldest first, one second apart) goes to. `deposit` adds one more
 * later, at the newest end.
 */
export function bigMerchant(options: {
  key: string;
  wallets: number;
  deposits: number;
  walletOf: (i: number) => number;
}) {
  const store = new SandboxStore();
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  const at = (i: number) => new Date(start + i * 1000).toISOString();
  const merchant = store.createMerchant('Big Merchant', null, at(0));
  store.createApiKey(merchant.id, 'test', 'read_write', options.key);
  const wallets = Array.from(
    { length: options.wallets },
    () => store.createWallet(merchant.id, { USDT: new Money('100'), TRX: new Money('10') }, at(0)).id,
  );
  /** Each wallet's deposit ids, newest first: the ground truth. */
  const truth = new Map<string, string[]>(wallets.map((id) => [id, []]));
  let count = 0;
  const deposit = (wallet: number) => {
    const walletId = wallets[wallet] as string;
    const { id } = store.createDeposit(walletId, {
      currencyCode: 'USDT',
      amount: new Money('10'),
      amountFee: new Money('0.1'),
      status: 'completed',
      createdAt: at(++count),
    });
    truth.get(walletId)?.unshift(id);
    return id;
  };
  for (let i = 0; i < options.deposits; i++) deposit(options.walletOf(i));
  return { store, merchantId: merchant.id, wallets, truth, deposit };
}
