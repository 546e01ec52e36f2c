import DataLoader from 'dataloader';
import type { Caller } from '../upstream/caller.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';
import type { DepositDTO, ListParams, Page, WalletDTO, WithdrawalIntentDTO } from '../upstream/types.ts';
import type { WalletIndexing } from './index-builds.ts';
import { HEAD_SIZE } from './list-pages.ts';
import { MerchantListReader } from './wallet-lists.ts';

/** Page size when reading a whole list (the wallets): the REST maximum, so it makes the fewest calls. */
export const SCAN_PAGE_SIZE = 1000;

export type ListResource = 'deposits' | 'withdrawalIntents';
type Item<R extends ListResource> = R extends 'deposits' ? DepositDTO : WithdrawalIntentDTO;

export interface Loaders {
  wallet: DataLoader<string, WalletDTO | null>;
  deposit: DataLoader<string, DepositDTO | null>;
  withdrawalIntent: DataLoader<string, WithdrawalIntentDTO | null>;
  walletsPage(params: ListParams): Promise<Page<WalletDTO>>;
  depositsPage(params: ListParams): Promise<Page<DepositDTO>>;
  withdrawalIntentsPage(params: ListParams): Promise<Page<WithdrawalIntentDTO>>;
  /** The merchant's list a wallet's items are read from; `statusIn`: the filtered list (no index). */
  walletList<R extends ListResource>(resource: R, statusIn?: readonly string[]): MerchantListReader<Item<R>>;
  /**
   * Starts the wallet list call now, beside the items whose wallets the query selects, so the wallets
   * come with them, not a round trip later; the wallet loader then answers even one id from it.
   */
  prefetchWallets(): void;
}

/**
 * One request's data access, for one API key, made in createContext and dropped with it: nothing
 * cached here reaches another caller. By-id loaders batch and are primed by every list page; page
 * loaders deduplicate identical list calls; one MerchantListReader per list and status filter.
 */
export function createLoaders(
  client: MerchantWalletClient,
  caller: Caller,
  indexing?: WalletIndexing,
): Loaders {
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
                  // An Error as one key's value rejects that load alone (the batch's other pages
                  // still resolve), and the loader keeps it: this request does not ask that page again.
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

  const readers = new Map<string, MerchantListReader<DepositDTO | WithdrawalIntentDTO>>();
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
    walletList<R extends ListResource>(resource: R, statusIn?: readonly string[]) {
      const key = `${resource}|${statusIn?.join(',') ?? ''}`;
      let reader = readers.get(key);
      if (!reader) {
        const small = resource === 'deposits' ? depositsPage : withdrawalIntentsPage;
        const fresh = (params: ListParams) =>
          resource === 'deposits'
            ? client.listDeposits(caller, params, { fresh: true })
            : client.listWithdrawalIntents(caller, params, { fresh: true });
        reader = new MerchantListReader<DepositDTO | WithdrawalIntentDTO>({
          list: resource,
          owner: () => client.merchants.of(caller.scope),
          limits: {
            deadline: caller.deadline,
            callsLeft: () => caller.calls.max - caller.calls.made,
          },
          authorization: caller.authorization,
          // The newest page through the request's page loader (deduplicated, primes the by-id
          // loaders, may come from the micro-cache); every other page fresh, straight to the
          // client: a cached page older than what the request read before would not continue a
          // walk, and the request keeps only the items its wallets use.
          fetchPage: (request) => {
            const params = { ...request, ...(statusIn && { statusIn }) };
            return request.page === 1 && request.size === HEAD_SIZE ? small(params) : fresh(params);
          },
          ...(!statusIn && indexing && { indexes: indexing.indexes, builds: indexing.builds }),
        });
        readers.set(key, reader);
      }
      return reader as unknown as MerchantListReader<Item<R>>;
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
