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

/** Items behind the newest page a request reads itself to bring the index up to date (3 pages of 250). */
const CATCH_UP_INLINE = 750;

export interface ListReaderOptions<T> {
  list: IndexedList;
  /** Whose index the list has: the caller's merchant (merchants.ts), else its scope; asked after the head. */
  owner: () => string;
  authorization: string;
  /** A page of the merchant list (unfiltered, or with the reader's status filter). */
  fetchPage: (request: PageRequest) => Promise<Page<T>>;
  /** Off for filtered lists and when WALLET_INDEX_MAX_BYTES is 0. */
  indexes?: WalletIndexes | undefined;
  /** The request's deadline (epoch ms) and REST calls left, which decide a cold walk (coldWalk). */
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

/**
 * One request's view of a merchant list (deposits or withdrawal intents), from which its wallets'
 * lists are read, placed by age (wallet-index.ts): docs/wallet-index.md, What a request does.
 */
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

  /** The newest page (HEAD_SIZE items), read once per request. */
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

  /**
   * The wallet index, up to date with this request's head, or null (none, discarded, or further
   * behind than the request catches up itself: then a build is asked for). Memoised per request.
   */
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
    // No index yet: only a walk past the head asks for one (walkedPastHead).
    if (index.covered === 0 && head.total > HEAD_SIZE) return null;
    const gap = head.total - index.covered;
    if (gap > HEAD_SIZE && gap <= HEAD_SIZE + CATCH_UP_INLINE) {
      // The items just behind the head, in pages of 250, oldest first so each continues the index.
      const requests: PageRequest[] = [];
      for (let page = Math.ceil(gap / HEAD_SIZE); page >= 2; page--) requests.push({ page, size: HEAD_SIZE });
      const pages = await Promise.all(requests.map((request) => this.read(request)));
      for (const page of pages) if (!index.absorb(page)) break;
    }
    // A head older than the index (the micro-cache's) cannot place its newest ages: this request walks.
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
   * A walk of this request reads past the newest page: a build of the index is asked for, and when
   * the `left` items could not be walked within the request's calls, the walk goes cold (coldWalk).
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
   * With a build under way, waits for it when it should end within the deadline (then IndexReady),
   * else throws QUERY_LIMIT_EXCEEDED with its estimate: docs/wallet-index.md#a-cold-index.
   */
  private async coldWalk(builds: IndexBuilds, scope: string, deadline: number | undefined): Promise<void> {
    const { list } = this.options;
    let eta = builds.eta(scope, list);
    if (eta === undefined) return;
    const remaining = deadline === undefined ? Number.POSITIVE_INFINITY : deadline - Date.now();
    if (eta + READ_AFTER_BUILD_MS <= remaining) {
      // Even past the estimate: waiting costs no call, only time the request has anyway.
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
   * The items at these ages, each read now in the fewest pages of at most 250 (list-pages.ts); null
   * when one is not where the index says (the index is then discarded: read as without one).
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
   * A walk from `from` (exclusive; null: the newest end going older, the oldest going newer),
   * shared by the request's wallets until it starts.
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
