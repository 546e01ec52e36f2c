import { createHash, randomBytes } from 'node:crypto';
import { Money } from './money.ts';
import type { DepositStatus, KeyAccess, Merchant, WalletRecord, WithdrawalStatus } from './store/records.ts';
import { SandboxStore } from './store/store.ts';

/**
 * The deterministic default world: the same seed gives the same merchants, ids, addresses,
 * amounts and timestamps on every machine, so demos, docs and screenshots agree.
 */

/** Fixed demo keys, printed at start-up and documented in docs/sandbox.md. Sandbox-only values. */
export const DEMO_KEYS = {
  acmeReadWrite: 'mw_sandbox_demo_acme_read_write',
  acmeReadOnly: 'mw_sandbox_demo_acme_read_only',
  acmeRevoked: 'mw_sandbox_demo_acme_revoked',
  globexReadWrite: 'mw_sandbox_demo_globex_read_write',
  initechReadWrite: 'mw_sandbox_demo_initech_read_write',
} as const;

export interface WorldSize {
  /** Wallets of the first merchant (Acme). */
  wallets: number;
  /** Deposits of the first merchant. */
  deposits: number;
  /** Withdrawal intents of the first merchant. */
  withdrawals: number;
  /**
   * One more wallet for the first merchant, its newest-created (created after the others), whose
   * QUIET_WALLET deposits and withdrawals all lie in the oldest 1 % of the history: a wallet whose
   * latest activity is long ago. Off unless asked for; the default world is the same without it.
   */
  quietWallet?: boolean;
}

/** The quiet wallet's history: 10 deposits and 3 withdrawals, spread over the oldest 1 % of the events. */
export const QUIET_WALLET = { deposits: 10, withdrawals: 3, share: 0.01 } as const;

export const DEFAULT_WORLD: WorldSize = { wallets: 4, deposits: 300, withdrawals: 120 };

/** The seeded history spans the 90 days before this instant. */
const WORLD_END = Date.parse('2026-06-01T00:00:00.000Z');
const WORLD_SPAN_MS = 90 * 24 * 60 * 60 * 1000;

/** Deterministic bytes: SHA-256 of the seed and a counter, as many blocks as asked for. */
export function seededRandom(seed: string): (size: number) => Uint8Array {
  let counter = 0;
  return (size) => {
    const out = new Uint8Array(size);
    for (let offset = 0; offset < size; offset += 32) {
      const block = createHash('sha256').update(`${seed}:${counter++}`).digest();
      out.set(block.subarray(0, Math.min(32, size - offset)), offset);
    }
    return out;
  };
}

export interface SeededWorld {
  store: SandboxStore;
  merchants: { acme: Merchant; globex: Merchant; initech: Merchant };
}

export function seedWorld(size: Partial<WorldSize> = {}, seed = 'merchant-wallet-sandbox'): SeededWorld {
  const world = { ...DEFAULT_WORLD, ...size };
  const random = seededRandom(seed);
  const store = new SandboxStore({ random, now: () => new Date(WORLD_END) });
  const pick = (n: number) => (random(4).reduce((acc, b) => acc * 256 + b, 0) % n) as number;
  const amountBetween = (min: number, max: number) => new Money(min * 100 + pick((max - min) * 100)).div(100);

  const createdAt = new Date(WORLD_END - WORLD_SPAN_MS - 86_400_000).toISOString();
  const acme = store.createMerchant(
    'Acme Coffee',
    { fee: new Money('1.5'), dailyLimit: new Money('50000'), monthlyLimit: new Money('500000') },
    createdAt,
  );
  const globex = store.createMerchant(
    'Globex Travel',
    { fee: new Money('2'), dailyLimit: new Money('20000'), monthlyLimit: new Money('200000') },
    createdAt,
  );
  const initech = store.createMerchant('Initech Labs', null, createdAt);

  const keys: [Merchant, string, KeyAccess, string][] = [
    [acme, 'demo read-write', 'read_write', DEMO_KEYS.acmeReadWrite],
    [acme, 'demo read-only', 'read_only', DEMO_KEYS.acmeReadOnly],
    [acme, 'demo revoked', 'read_write', DEMO_KEYS.acmeRevoked],
    [globex, 'demo read-write', 'read_write', DEMO_KEYS.globexReadWrite],
    [initech, 'demo read-write', 'read_write', DEMO_KEYS.initechReadWrite],
  ];
  for (const [merchant, name, access, key] of keys) {
    const { record } = store.createApiKey(merchant.id, name, access, key);
    if (key === DEMO_KEYS.acmeRevoked) store.revokeApiKey(record.id);
  }

  const populate = (
    merchant: Merchant,
    walletCount: number,
    depositCount: number,
    withdrawalCount: number,
    quietWallet = false,
  ) => {
    const wallets: WalletRecord[] = [];
    for (let i = 0; i < walletCount; i++) {
      // Enough USDT for well over this wallet's share of the seeded withdrawals (at most 502 each).
      const reserve = Math.ceil((withdrawalCount / walletCount) * 1.5 + 20) * 502;
      const balances = { USDT: amountBetween(20_000, 40_000).plus(reserve), TRX: amountBetween(50, 500) };
      wallets.push(
        store.createWallet(merchant.id, balances, new Date(Date.parse(createdAt) + i * 1000).toISOString()),
      );
    }
    // Deposits and withdrawals interleave in time, oldest first, so timelines only append.
    const events = depositCount + withdrawalCount;
    // The quiet wallet (asked for only): created last, its items slotted among the oldest 1 % of
    // the events, each at the same instant as the event it precedes.
    const quiet: { wallet: WalletRecord; slots: number[] } | undefined = quietWallet
      ? {
          wallet: store.createWallet(
            merchant.id,
            { USDT: new Money(20_000), TRX: new Money(100) },
            new Date(Date.parse(createdAt) + walletCount * 1000).toISOString(),
          ),
          slots: Array.from({ length: QUIET_WALLET.deposits + QUIET_WALLET.withdrawals }, (_, j) =>
            Math.floor(
              (j * events * QUIET_WALLET.share) / (QUIET_WALLET.deposits + QUIET_WALLET.withdrawals),
            ),
          ),
        }
      : undefined;
    let deposits = 0;
    for (let i = 0; i < events; i++) {
      const at = WORLD_END - WORLD_SPAN_MS + Math.floor((i * WORLD_SPAN_MS) / Math.max(events, 1));
      if (quiet) {
        quiet.slots.forEach((slot, j) => {
          if (slot !== i) return;
          // Deposits and withdrawals alternate until the withdrawals are placed, then deposits.
          if (j % 2 === 1 && (j - 1) / 2 < QUIET_WALLET.withdrawals)
            seedWithdrawal(merchant, quiet.wallet, at);
          else seedDeposit(quiet.wallet, at);
        });
      }
      const wallet = wallets[pick(wallets.length)] as WalletRecord;
      const depositTurn = deposits < depositCount && (i * depositCount) / events >= deposits;
      if (depositTurn) {
        deposits++;
        seedDeposit(wallet, at);
      } else {
        seedWithdrawal(merchant, wallet, at);
      }
    }
  };

  const seedDeposit = (wallet: WalletRecord, at: number) => {
    const roll = pick(100);
    const status: DepositStatus =
      roll < 80 ? 'completed' : roll < 85 ? 'pending' : roll < 90 ? 'processing' : 'failed';
    const currencyCode = pick(10) === 0 ? 'TRX' : 'USDT';
    const amount = amountBetween(10, 5000);
    const amountFee = amount.times('0.01').toDecimalPlaces(2);
    const deposit = store.createDeposit(wallet.id, {
      currencyCode,
      amount,
      amountFee,
      status: status === 'failed' ? 'pending' : status,
      createdAt: new Date(at).toISOString(),
    });
    if (status === 'failed')
      store.transitionDeposit(deposit.id, 'failed', new Date(at + 60_000).toISOString());
  };

  const seedWithdrawal = (merchant: Merchant, wallet: WalletRecord, at: number) => {
    const config = merchant.withdrawalConfig;
    if (!config) return;
    const roll = pick(100);
    const status: WithdrawalStatus =
      roll < 60
        ? 'completed'
        : roll < 70
          ? 'failed'
          : roll < 80
            ? 'cancelled'
            : roll < 85
              ? 'preparing'
              : roll < 90
                ? 'reviewing'
                : 'pending';
    const serviceFeeMode = pick(2) === 0 ? 'inclusive' : 'exclusive';
    const amount = amountBetween(5, 500);
    const fee = config.fee;
    const gross = serviceFeeMode === 'inclusive' ? amount : amount.plus(fee);
    if (wallet.assets.get('USDT')?.available.lt(gross) ?? true) return;
    const intent = store.insertWithdrawal(wallet, {
      serviceFeeMode,
      currencyCode: 'USDT',
      destinationAddress: store.newTronAddress(),
      amount,
      amountFee: fee,
      amountNet: serviceFeeMode === 'inclusive' ? amount.minus(fee) : amount,
      amountGross: gross,
      createdAt: new Date(at).toISOString(),
    });
    const paths: Record<WithdrawalStatus, WithdrawalStatus[]> = {
      preparing: [],
      reviewing: ['reviewing'],
      pending: ['reviewing', 'pending'],
      completed: ['reviewing', 'pending', 'completed'],
      failed: ['reviewing', 'failed'],
      cancelled: ['cancelled'],
    };
    paths[status].forEach((next, step) => {
      store.transitionWithdrawal(intent.id, next, new Date(at + (step + 1) * 60_000).toISOString());
    });
  };

  populate(acme, world.wallets, world.deposits, world.withdrawals, world.quietWallet);
  populate(globex, 3, 150, 60);
  populate(initech, 1, 20, 0);

  // Seeding ran on a frozen clock and seeded randomness; from here on the sandbox is live.
  store.now = () => new Date();
  store.random = (n) => randomBytes(n);
  return { store, merchants: { acme, globex, initech } };
}
