import { GatewayError } from '../errors/errors.ts';
import type { PageRequest } from '../schema/pagination.ts';
import type { Page } from '../upstream/types.ts';
import type { IndexBuilds } from './index-builds.ts';
import { clusters, HEAD_SIZE } from './list-pages.ts';
import { type Direction, Walk } from './walk.ts';
import {
  type AgedPage,
  agedPage,
  type IndexedList,
  type ListIndex,
  type ListItem,
  type WalletIndexes,
} from './wallet-index.ts';

/**
 * One request's view of a merchant list (its deposits or its withdrawal intents), from which
 * wallet lists are read: the REST API has no wallet filter.
 *
 * Positions here are *ages* (wallet-index.ts): counted from the oldest end, so new items never
 * shift them, and a cursor that holds one says where to go on reading however deep it is.
 *
 * - `head()`: the newest page (250 items), read once per request: it gives the list's length,
 *   holds a busy wallet's latest items, and brings the wallet index up to date.
 * - `index()`: the merchant's wallet index, up to date with the head, or null (none yet, or behind
 *   by more than a few pages: a background job is asked to catch it up).
 * - `readAges()`: the items at given ages, in the fewest small pages, checked against the index.
 * - `walk()`: reads on from an age towards the older or the newer end, page by page, for the
 *   wallets that asked, keeping only what they need (walk.ts).
 */

/** Items behind the newest page that a request reads itself to bring the index up to date (3 pages of 250). */
const CATCH_UP_INLINE = 750;

export interface ListReaderOptions<T> {
  list: IndexedList;
  /**
   * Whose index the list has: the caller's merchant (merchants.ts), or its scope while its
   * merchant is not known. Asked once per reader, after the head was read (which names the
   * merchant's wallets, so a new key of a known merchant finds its merchant's index at once).
   */
  owner: () => string;
  authorization: string;
  /** A page of the merchant list (unfiltered, or with the reader's status filter). */
  fetchPage: (request: PageRequest) => Promise<Page<T>>;
  /** Off for filtered lists and when WALLET_INDEX_MAX_BYTES is 0. */
  indexes?: WalletIndexes | undefined;
  /**
   * The request's deadline (epoch ms) and the REST calls it has left: a walk that could not reach
   * the list's end within them waits for the index's build instead, or answers at once (coldWalk).
   */
  limits?: { deadline: number | undefined; callsLeft: () => number };
  builds?: IndexBuilds | undefined;
}

/** A walk page's size: what the calls left are counted in. */
const WALK_PAGE = 1000;
/** Time kept, after waiting for a build, to read the window from the index. */
const READ_AFTER_BUILD_MS = 2_000;

/** A walk stopped because the index it waited for is ready: the request reads from it instead. */
export class IndexReady extends Error {
  constructor() {
    super('the wallet index is ready');
    this.name = 'IndexReady';
  }
}

/** The answer of a wallet list that could not be walked within its request while its index is built. */
function coldIndexError(list: IndexedList, total: number, etaMs: number): GatewayError {
  const retryAfterSeconds = Math.max(1, Math.ceil(etaMs / 1000));
  const items = list === 'deposits' ? 'deposits' : 'withdrawal intents';
  return new GatewayError(
    'QUERY_LIMIT_EXCEEDED',
    `This wallet's ${items} lie in a merchant list of ${total} items, more than one request may read, and the gateway is indexing it in the background: retry in ${retryAfterSeconds} s, when the same page costs a few calls.`,
    { extensions: { retryAfterSeconds, indexing: true } },
  );
}

export class MerchantListReader<T extends ListItem> {
  private readonly options: ListReaderOptions<T>;
  private headPage: Promise<AgedPage<T>> | undefined;
  private indexState: Promise<ListIndex | null> | undefined;
  /** The longest total seen: a page with a smaller one means items left the list. */
  total = 0;
  private readonly walks = new Map<string, Walk<T>>();

  constructor(options: ListReaderOptions<T>) {
    this.options = options;
  }

  private ownerMemo: string | undefined;

  /** The index's owner (see ListReaderOptions.owner), fixed for the rest of the request. */
  private get scope(): string {
    this.ownerMemo ??= this.options.owner();
    return this.ownerMemo;
  }

  get list(): IndexedList {
    return this.options.list;
  }

  /** Whether this list may have a wallet index (unfiltered, indexes on). */
  get indexed(): boolean {
    return this.options.indexes?.enabled ?? false;
  }

  head(): Promise<AgedPage<T>> {
    this.headPage ??= this.read({ page: 1, size: HEAD_SIZE });
    return this.headPage;
  }

  async read(request: PageRequest): Promise<AgedPage<T>> {
    const page = agedPage(await this.options.fetchPage(request), (request.page - 1) * request.size);
    this.total = Math.max(this.total, page.total);
    return page;
  }

  /** Whether a background job is building this list's index (for the advice of a refused request). */
  get indexing(): boolean {
    return this.options.builds?.pending(this.scope, this.options.list) ?? false;
  }

  /** The wallet index, up to date with this request's head, or null. Memoised per request. */
  index(): Promise<ListIndex | null> {
    this.indexState ??= this.syncIndex();
    return this.indexState;
  }

  private async syncIndex(): Promise<ListIndex | null> {
    const { indexes, builds, list, authorization } = this.options;
    const head = await this.head();
    const scope = this.scope;
    const index = indexes?.of(scope, list);
    if (!indexes || !index || index.discarded) return null;
    // A list longer than the head with no index yet: the request walks, and a walk past the head
    // asks for the index to be built (walkedPastHead), so a screen the head answers costs nothing more.
    if (index.covered === 0 && head.total > HEAD_SIZE) return null;
    const gap = head.total - index.covered;
    if (gap > HEAD_SIZE && gap <= HEAD_SIZE + CATCH_UP_INLINE) {
      // The items just behind the head, in pages of 250, oldest first so each continues the index.
      const requests: PageRequest[] = [];
      for (let page = Math.ceil(gap / HEAD_SIZE); page >= 2; page--) requests.push({ page, size: HEAD_SIZE });
      const pages = await Promise.all(requests.map((request) => this.read(request)));
      for (const page of pages) if (!index.absorb(page)) break;
    }
    // A head older than the index (the micro-cache's, from before another request caught it up)
    // cannot place the index's newest ages: this request walks.
    if (head.total < index.covered) return null;
    const ok = index.absorb(head);
    indexes.resize(index);
    if (!ok) {
      if (index.discarded === 'moved') {
        if (builds) builds.contradicted(scope, list, authorization, head.total);
        else indexes.forget(scope, list);
      }
      return null;
    }
    if (index.covered < head.total) {
      builds?.request(scope, list, authorization, head.total);
      return null;
    }
    return index;
  }

  /**
   * A walk of this request reads past the newest page: the merchant's list is long enough that
   * its wallet index pays, so a background job is asked to build it (or catch it up). Then, when
   * what is left of the list (`left` items) could not be walked within the request's calls, the
   * walk does not start spending them for an error (coldWalk).
   */
  async walkedPastHead(left: number): Promise<void> {
    const { builds, indexes, list, authorization, limits } = this.options;
    const scope = this.scope;
    if (!builds || !indexes?.enabled) return;
    if (!this.askedForIndex) {
      this.askedForIndex = true;
      builds.request(scope, list, authorization, this.total);
    }
    if (!limits || Math.ceil(left / WALK_PAGE) <= limits.callsLeft()) return;
    await this.coldWalk(builds, scope, limits.deadline);
  }

  /**
   * A walk that could not reach the list's end within the request's calls, while the index is
   * being built: waits for the build when it should be done within the request's deadline (then
   * IndexReady: the request reads from the index), else fails at once with
   * QUERY_LIMIT_EXCEEDED and `retryAfterSeconds` from the build's progress, having made no call
   * past the newest page. docs/wallet-index.md#a-cold-index.
   */
  private async coldWalk(builds: IndexBuilds, scope: string, deadline: number | undefined): Promise<void> {
    const { list } = this.options;
    let eta = builds.eta(scope, list);
    if (eta === undefined) return;
    const remaining = deadline === undefined ? Number.POSITIVE_INFINITY : deadline - Date.now();
    if (eta + READ_AFTER_BUILD_MS <= remaining) {
      // However slower than its estimate the build runs: waiting costs no call, only time the
      // request has anyway.
      await builds.settled(scope, list, remaining - READ_AFTER_BUILD_MS);
      this.indexState = undefined;
      if (await this.index()) throw new IndexReady();
      eta = builds.eta(scope, list);
      if (eta === undefined) return;
    }
    throw coldIndexError(list, this.total, eta);
  }

  private askedForIndex = false;

  /**
   * The items at these ages (as of this request's head), each read from the REST API now, in the
   * fewest pages of at most 250 items; null when one is not where the index says (the index is
   * then discarded: the caller reads the list as without one).
   */
  async readAges(
    index: ListIndex,
    ages: readonly number[],
    walletId: string,
  ): Promise<Map<number, T> | null> {
    const head = await this.head();
    const found = new Map<number, T>();
    const take = (page: AgedPage<T>) => {
      for (const { age, item } of page.items) if (wanted.has(age)) found.set(age, item);
    };
    const wanted = new Set(ages);
    take(head);
    for (let attempt = 0; attempt < 2 && found.size < wanted.size; attempt++) {
      // Positions as of the longest total seen: a page read after new items arrived says so.
      const total = this.total;
      const positions = ages
        .filter((age) => !found.has(age))
        .map((age) => total - 1 - age)
        .sort((a, b) => a - b);
      const pages = await Promise.all(clusters(positions).map((request) => this.read(request)));
      for (const page of pages) take(page);
    }
    if (found.size < wanted.size) return null;
    for (const [age, item] of found) {
      if (item.wallet.id !== walletId || !index.matches(age, item)) {
        index.discard('moved');
        const { builds, indexes, list, authorization } = this.options;
        const scope = this.scope;
        if (builds) builds.contradicted(scope, list, authorization, this.total);
        else indexes?.forget(scope, list);
        return null;
      }
    }
    return found;
  }

  /**
   * A walk from `from` (exclusive; null: from the newest end going older, or the oldest end going
   * newer). Walks from the same place are shared by the wallets of a request until they start.
   */
  walk(direction: Direction, from: number | null): Walk<T> {
    const key = `${direction}:${from ?? ''}`;
    let walk = this.walks.get(key);
    if (!walk || walk.started) {
      walk = new Walk(this, direction, from);
      this.walks.set(key, walk);
    }
    return walk;
  }
}
