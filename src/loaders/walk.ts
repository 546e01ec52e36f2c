import type { PageRequest } from '../schema/pagination.ts';
import { HEAD_SIZE, WALK_PAGE_SIZE } from './list-pages.ts';
import type { AgedPage, ListItem } from './wallet-index.ts';

/** Pages a walk reads at once when it must go to the end of the list (totalCount). */
const READ_AHEAD = 3;
/** Steps in a row that read nothing new after which a walk ends (the list shrank under it). */
const STALLS_MAX = 3;

export interface Aged<T> {
  age: number;
  item: T;
}

export type Direction = 'older' | 'newer';

/** What one wallet list asks of a walk. */
export interface Consumer<T> {
  walletId: string;
  /** Which of the wallet's items count (a status filter); all when absent. */
  filter?: ((item: T) => boolean) | undefined;
  /** Items to keep, in walk order; Infinity with keep: false counts them to the end. */
  want: number;
  /** Whether to keep the items (false for counting). */
  keep: boolean;
  items: Aged<T>[];
  /** Matching items seen (kept or not). */
  seen: number;
}

/** What a walk reads through: one request's view of its merchant list (MerchantListReader). */
export interface WalkedList<T> {
  /** The longest total seen. */
  readonly total: number;
  head(): Promise<AgedPage<T>>;
  read(request: PageRequest): Promise<AgedPage<T>>;
  /** Told before a step reads past the newest page, with the items left to the list's end. */
  walkedPastHead(left: number): Promise<void>;
}

/**
 * A walk along a merchant list from an age, towards the older end (ages descending) or the newer
 * (ascending), for the consumers that joined before it started. Progress is by age, never by
 * position: a page read after new items arrived is placed by its own total, and the walk never
 * skips an age (when a page does not continue where the walk stands, it reads again from there).
 */
export class Walk<T extends ListItem> {
  private readonly reader: WalkedList<T>;
  readonly direction: Direction;
  /** The next age to read. */
  private next: number | undefined;
  private readonly consumers: Consumer<T>[] = [];
  started = false;
  private running: Promise<void> | null = null;
  /** Steps in a row that did not advance (STALLS_MAX). */
  private stalls = 0;
  private ended = false;
  /** Steps taken: a walk reads ahead from its third. */
  private steps = 0;

  constructor(reader: WalkedList<T>, direction: Direction, from: number | null) {
    this.reader = reader;
    this.direction = direction;
    if (from !== null) this.next = direction === 'older' ? from - 1 : from + 1;
  }

  get exhausted(): boolean {
    if (this.ended) return true;
    if (this.next === undefined) return false;
    return this.direction === 'older' ? this.next < 0 : this.next >= this.reader.total;
  }

  join(consumer: Consumer<T>): Consumer<T> {
    this.consumers.push(consumer);
    return consumer;
  }

  /** Reads on until `consumer` has what it wants, or the list ends. */
  async fill(consumer: Consumer<T>): Promise<void> {
    while (consumer.seen < consumer.want && !this.exhausted) {
      this.running ??= this.step().finally(() => {
        this.running = null;
      });
      await this.running;
    }
  }

  private async step(): Promise<void> {
    this.started = true;
    if (this.next === undefined) {
      const head = await this.reader.head();
      this.next = this.direction === 'older' ? head.total - 1 : 0;
      if (this.exhausted) return;
    }
    // Reads ahead only two pages in, or to reach the end: a window near the start pays for no unused page.
    const counting = this.consumers.some((c) => !Number.isFinite(c.want) && c.seen < c.want);
    const requests = this.plan(counting ? READ_AHEAD : this.steps >= 2 ? 2 : 1);
    this.steps++;
    if (requests.some((request) => request.page !== 1 || request.size !== HEAD_SIZE)) {
      const next = this.next as number;
      await this.reader.walkedPastHead(this.direction === 'older' ? next + 1 : this.reader.total - next);
    }
    const pages = await Promise.all(
      requests.map((request) =>
        request.page === 1 && request.size === HEAD_SIZE ? this.reader.head() : this.reader.read(request),
      ),
    );
    let advanced = false;
    for (const page of pages) {
      const continued = this.take(page);
      advanced ||= continued;
      if (!continued) break;
    }
    this.stalls = advanced ? 0 : this.stalls + 1;
    if (this.stalls >= STALLS_MAX) this.ended = true;
  }

  /** The next `count` pages from where the walk stands, assuming the list does not grow meanwhile. */
  private plan(count: number): PageRequest[] {
    const total = this.reader.total;
    const requests: PageRequest[] = [];
    let position = total - 1 - (this.next as number);
    for (let i = 0; i < count; i++) {
      if (position < 0 || position >= total) break;
      const request = this.direction === 'older' ? olderPage(position) : newerPage(position);
      requests.push(request);
      const start = (request.page - 1) * request.size;
      position = this.direction === 'older' ? start + request.size : start - 1;
    }
    return requests;
  }

  /** Hands the page's items that continue the walk to the consumers; false when it does not continue it. */
  private take(page: AgedPage<T>): boolean {
    const items = this.direction === 'older' ? page.items : [...page.items].reverse();
    let advanced = false;
    for (const { age, item } of items) {
      if (this.exhausted) break;
      if (age !== this.next) {
        // Behind the walk (already read): skip; ahead of it (the list grew): read again from here.
        if (this.direction === 'older' ? age > (this.next as number) : age < (this.next as number)) continue;
        return advanced;
      }
      advanced = true;
      this.next = this.direction === 'older' ? age - 1 : age + 1;
      for (const consumer of this.consumers) {
        if (consumer.walletId !== item.wallet.id || (consumer.filter && !consumer.filter(item))) continue;
        consumer.seen++;
        if (consumer.keep && consumer.items.length < consumer.want) consumer.items.push({ age, item });
      }
    }
    return advanced;
  }
}

/** The page to read going older from `position`: a page that starts there when one of 1000, 500 or 250 does. */
function olderPage(position: number): PageRequest {
  if (position < HEAD_SIZE) return { page: 1, size: HEAD_SIZE };
  for (const size of [WALK_PAGE_SIZE, 500, HEAD_SIZE]) {
    if (position % size === 0) return { page: position / size + 1, size };
  }
  return { page: Math.floor(position / WALK_PAGE_SIZE) + 1, size: WALK_PAGE_SIZE };
}

/** The page to read going newer from `position` (towards position 0): one that ends there when one can. */
function newerPage(position: number): PageRequest {
  if (position < HEAD_SIZE) return { page: 1, size: HEAD_SIZE };
  for (const size of [WALK_PAGE_SIZE, 500, HEAD_SIZE]) {
    if ((position + 1) % size === 0) return { page: (position + 1) / size, size };
  }
  return { page: Math.floor(position / WALK_PAGE_SIZE) + 1, size: WALK_PAGE_SIZE };
}
