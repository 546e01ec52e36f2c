import { describe, expect, it } from 'vitest';
import { parseSandboxConfig } from '../../src/sandbox/config.ts';
import { DEFAULT_WORLD, QUIET_WALLET, seedWorld } from '../../src/sandbox/seed.ts';

// The quiet wallet: a wallet of the first merchant whose whole history is long ago, for the
// big-merchant benchmark. Asked for only; the default world stays as it was.
describe('sandbox quiet wallet', () => {
  const size = { wallets: 4, deposits: 2_000, withdrawals: 200 };

  it('is the newest-created wallet, with 10 deposits and 3 withdrawals all in the oldest 1 % of the history', () => {
    const { store, merchants } = seedWorld({ ...size, quietWallet: true });
    const acmeWallets = [...store.wallets.values()].filter((w) => w.merchantId === merchants.acme.id);
    expect(acmeWallets).toHaveLength(size.wallets + 1);
    const newest = acmeWallets.reduce((a, b) => (b.createdAt > a.createdAt ? b : a));
    const deposits = [...store.deposits.values()].filter((d) => d.merchantId === merchants.acme.id);
    const withdrawals = [...store.withdrawals.values()].filter((w) => w.merchantId === merchants.acme.id);
    const quietDeposits = deposits.filter((d) => d.walletId === newest.id);
    const quietWithdrawals = withdrawals.filter((w) => w.walletId === newest.id);
    expect(quietDeposits).toHaveLength(QUIET_WALLET.deposits);
    expect(quietWithdrawals).toHaveLength(QUIET_WALLET.withdrawals);
    // In creation order (the REST lists' order, oldest first here), within the oldest 1 % + the slots.
    const depositRank = deposits.map((d) => d.id);
    const withdrawalRank = withdrawals.map((w) => w.id);
    for (const d of quietDeposits) expect(depositRank.indexOf(d.id)).toBeLessThan(deposits.length * 0.02);
    for (const w of quietWithdrawals)
      expect(withdrawalRank.indexOf(w.id)).toBeLessThan(withdrawals.length * 0.02 + QUIET_WALLET.withdrawals);
    const cutoff = Date.parse(deposits[Math.floor(deposits.length * 0.02)]?.createdAt ?? '');
    for (const item of [...quietDeposits, ...quietWithdrawals])
      expect(Date.parse(item.createdAt)).toBeLessThanOrEqual(cutoff);
  });

  it('is the same on every seeding, and leaves the default world as it was when not asked for', () => {
    const ids = (quietWallet?: boolean) => {
      const { store } = seedWorld({ ...size, ...(quietWallet === undefined ? {} : { quietWallet }) });
      return [...store.wallets.keys(), ...store.deposits.keys(), ...store.withdrawals.keys()];
    };
    expect(ids(true)).toEqual(ids(true));
    expect(ids(false)).toEqual(ids());
    expect(ids(true)).not.toEqual(ids());
  });

  it('is asked for with --quiet-wallet or SANDBOX_QUIET_WALLET=true', () => {
    expect(parseSandboxConfig([], {}).world).toEqual(DEFAULT_WORLD);
    expect(parseSandboxConfig(['--quiet-wallet'], {}).world.quietWallet).toBe(true);
    expect(parseSandboxConfig([], { SANDBOX_QUIET_WALLET: 'true' }).world.quietWallet).toBe(true);
    expect(parseSandboxConfig([], { SANDBOX_QUIET_WALLET: 'false' }).world.quietWallet).toBeUndefined();
  });
});
