import DataLoader from 'dataloader';
import type { Caller } from '../upstream/caller.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';
import type { DepositDTO, ListParams, Page, WalletDTO, WithdrawalIntentDTO } from '../upstream/types.ts';
import { ListScan, SCAN_PAGE_SIZE } from './list-scan.ts';

/**
 * Per-request data access. Everything here is created in createContext for one GraphQL request and
 * one API key, and dropped with it: nothing cached here can reach another caller.
 *
 * - by-id loaders batch and deduplicate; every list response primes them;
 * - page loaders deduplicate identical list calls within the request;
 * - scans walk the merchant's deposit or withdrawal list once per request for all wallets that
 *   ask for their own items (the REST API has no wallet filter).
 */

export type ListResource = 'deposits' | 'withdrawalIntents';
type Item<R extends ListResource> = R extends 'deposits' ? DepositDTO : WithdrawalIntentDTO;

export interface Loaders {
  wallet: DataLoader<string, WalletDTO | null>;
  deposit: DataLoader<string, DepositDTO | null>;
  withdrawalIntent: DataLoader<string, WithdrawalIntentDTO | null>;
  walletsPage(params: ListParams): Promise<Page<WalletDTO>>;
  depositsPage(params: ListParams): Promise<Page<DepositDTO>>;
  withdrawalIntentsPage(params: ListParams): Promise<Page<WithdrawalIntentDTO>>;
  scan<R extends ListResource>(resource: R, statusIn: readonly string[] | undefined): ListScan<Item<R>>;
  /**
   * Starts the wallet list call now, in parallel with whatever else the request is fetching, for
   * a list of items whose wallets the query selects: the wallets then arrive with the items instead
   * of one round trip after them. The wallet loader then answers even a single id from that list.
   */
  prefetchWallets(): void;
}

export function createLoaders(client: MerchantWalletClient, caller: Caller): Loaders {
  let walletListStarted = false;
  // Each loader is built on first use: most requests need two or three of the six.
  const wallet = once(
    () =>
      new DataLoader<string, WalletDTO | null>(async (ids) => {
        // One id: GET /wallets/{id}. Several: the wallet list (merchants have few wallets), which
        // answers every id in one or a few calls instead of N.
        if (ids.length === 1 && !walletListStarted) return [await client.getWallet(caller, ids[0] as string)];
        const byId = new Map<string, WalletDTO>();
        for (let page = 1; ; page++) {
          const result = await walletsPage({ page, size: SCAN_PAGE_SIZE });
          for (const item of result.items) byId.set(item.id, item);
          if (page >= result.paging.totalPages || ids.every((id) => byId.has(id))) break;
        }
        return ids.map((id) => byId.get(id) ?? null);
      }),
  );
  const deposit = once(
    () =>
      new DataLoader<string, DepositDTO | null>((ids) =>
        Promise.all(ids.map((id) => client.getDeposit(caller, id))),
      ),
  );
  const withdrawalIntent = once(
    () =>
      new DataLoader<string, WithdrawalIntentDTO | null>((ids) =>
        Promise.all(ids.map((id) => client.getWithdrawalIntent(caller, id))),
      ),
  );

  const pageLoader = <T extends { id: string }>(
    fetch: (params: ListParams) => Promise<Page<T>>,
    prime: () => DataLoader<string, T | null>,
  ) => {
    const loader = once(
      () =>
        new DataLoader<ListParams, Page<T>, string>(
          (keys) =>
            Promise.all(
              keys.map((params) =>
                fetch(params).then(
                  (page) => {
                    const byId = prime();
                    for (const item of page.items) byId.prime(item.id, item);
                    return page;
                  },
                  (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
                ),
              ),
            ),
          { cacheKeyFn: (p) => `${p.page}|${p.size}|${p.statusIn?.join(',') ?? ''}` },
        ),
    );
    return (params: ListParams) => loader().load(params);
  };

  const walletsPage = pageLoader((p) => client.listWallets(caller, p), wallet);
  const depositsPage = pageLoader((p) => client.listDeposits(caller, p), deposit);
  const withdrawalIntentsPage = pageLoader((p) => client.listWithdrawalIntents(caller, p), withdrawalIntent);

  const scans = new Map<string, ListScan<DepositDTO | WithdrawalIntentDTO>>();
  return {
    get wallet() {
      return wallet();
    },
    get deposit() {
      return deposit();
    },
    get withdrawalIntent() {
      return withdrawalIntent();
    },
    walletsPage,
    depositsPage,
    withdrawalIntentsPage,
    scan<R extends ListResource>(resource: R, statusIn: readonly string[] | undefined) {
      const key = `${resource}|${statusIn?.join(',') ?? ''}`;
      let scan = scans.get(key);
      if (!scan) {
        const fetch = resource === 'deposits' ? depositsPage : withdrawalIntentsPage;
        scan = new ListScan<DepositDTO | WithdrawalIntentDTO>((params) => fetch({ ...params, statusIn }));
        scans.set(key, scan);
      }
      return scan as unknown as ListScan<Item<R>>;
    },
    prefetchWallets() {
      if (walletListStarted) return;
      walletListStarted = true;
      // A failure here is not lost: the wallet loader awaits this same (deduplicated) page call.
      walletsPage({ page: 1, size: SCAN_PAGE_SIZE }).catch(() => {});
    },
  };
}

/** `make()` on the first call, the same value on every later one. */
function once<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= make();
    return value;
  };
}
