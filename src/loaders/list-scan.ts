import type { Page } from '../upstream/types.ts';

/** Page size used when scanning a whole list: the REST maximum, so a scan makes the fewest calls. */
export const SCAN_PAGE_SIZE = 1000;
/**
 * Page size of the first page of a wallet scan: most wallet screens need only recent items, and
 * 250 holds 10 per wallet for a merchant with up to ~20 evenly used wallets.
 */
export const FIRST_SCAN_PAGE_SIZE = 250;

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
