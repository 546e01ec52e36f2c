import DataLoader from 'dataloader';
import type { Caller, MerchantWalletClient } from './upstream/client.ts';
import type { DepositDTO, ListParams, Page, WalletDTO, WithdrawalIntentDTO } from './upstream/types.ts';

/**
 * Per-request data access. Everything here is created in createContext for one GraphQL request and
 * one API key, and dropped with it: nothing cached here can reach another caller.
 *
 * - by-id loaders batch and deduplicate; every list response primes them;
 * - page loaders deduplicate identical list calls within the request;
 * - scans walk the merchant's deposit or withdrawal list once per request for all wallets that
 *   ask for their own items (the REST API has no wallet filter).
 */

/** Page size used when scanning a whole list: the REST maximum, so a scan makes the fewest calls. */
export const SCAN_PAGE_SIZE = 1000;
/**
 * Page size of the first page of a wallet scan: most wallet screens need only recent items, and
 * 250 holds 10 per wallet for a merchant with up to ~20 evenly used wallets.
 */
export const FIRST_SCAN_PAGE_SIZE = 250;

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

export function createLoaders(client: MerchantWalletClient, auth: Caller): Loaders {
  let walletListStarted = false;
  // Each loader is built on first use: most requests need two or three of the six.
  const wallet = once(
    () =>
      new DataLoader<string, WalletDTO | null>(async (ids) => {
        // One id: GET /wallets/{id}. Several: the wallet list (merchants have few wallets), which
        // answers every id in one or a few calls instead of N.
        if (ids.length === 1 && !walletListStarted) return [await client.getWallet(auth, ids[0] as string)];
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
        Promise.all(ids.map((id) => client.getDeposit(auth, id))),
      ),
  );
  const withdrawalIntent = once(
    () =>
      new DataLoader<string, WithdrawalIntentDTO | null>((ids) =>
        Promise.all(ids.map((id) => client.getWithdrawalIntent(auth, id))),
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

  const walletsPage = pageLoader((p) => client.listWallets(auth, p), wallet);
  const depositsPage = pageLoader((p) => client.listDeposits(auth, p), deposit);
  const withdrawalIntentsPage = pageLoader((p) => client.listWithdrawalIntents(auth, p), withdrawalIntent);

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

/**
 * A lazy, newest-first walk over one REST list, shared by every wallet of a request. Pages are
 * fetched one at a time and only while some wallet still needs more items.
 */
export class ListScan<T extends { id: string; wallet: { id: string } }> {
  private readonly byWallet = new Map<string, T[]>();
  private fetched = 0;
  private total = Number.POSITIVE_INFINITY;
  private pending: Promise<void> | null = null;

  private readonly fetchPage: (params: { page: number; size: number }) => Promise<Page<T>>;

  constructor(fetchPage: (params: { page: number; size: number }) => Promise<Page<T>>) {
    this.fetchPage = fetchPage;
  }

  get exhausted(): boolean {
    return this.fetched >= this.total;
  }

  /**
   * The wallet's items, once at least `needed` of them are known or the list is exhausted.
   * Pass Infinity to walk the whole list (for totalCount or `last` without `before`).
   */
  async itemsFor(walletId: string, needed: number): Promise<T[]> {
    while ((this.byWallet.get(walletId)?.length ?? 0) < needed && !this.exhausted) {
      this.pending ??= this.fetchNext().finally(() => {
        this.pending = null;
      });
      await this.pending;
    }
    return this.byWallet.get(walletId) ?? [];
  }

  /**
   * The next page to read: a small first page, then pages of 1000 (the REST maximum, so the walk
   * makes the fewest calls). Pages must tile the list, so a page of 1000 starts at a multiple of
   * 1000 and the part already read is skipped.
   */
  private nextRequest(): { page: number; size: number } {
    if (this.fetched === 0) return { page: 1, size: FIRST_SCAN_PAGE_SIZE };
    return { page: Math.floor(this.fetched / SCAN_PAGE_SIZE) + 1, size: SCAN_PAGE_SIZE };
  }

  private async fetchNext(): Promise<void> {
    const request = this.nextRequest();
    const page = await this.fetchPage(request);
    const pageStart = (request.page - 1) * request.size;
    const fresh = page.items.slice(this.fetched - pageStart);
    for (const item of fresh) {
      let list = this.byWallet.get(item.wallet.id);
      if (!list) {
        list = [];
        this.byWallet.set(item.wallet.id, list);
      }
      list.push(item);
    }
    this.fetched = pageStart + page.items.length;
    this.total = page.paging.totalCount;
    if (page.items.length === 0) this.total = this.fetched;
  }
}
