import { GatewayError } from '../errors/errors.ts';
import type { Aged, Consumer, Direction } from '../loaders/walk.ts';
import type { ListIndex, ListItem } from '../loaders/wallet-index.ts';
import { IndexReady, type MerchantListReader } from '../loaders/wallet-lists.ts';
import { type ConnectionShape, Edge } from './connections.ts';
import {
  type ConnectionArgs,
  checkCount,
  DEFAULT_WINDOW,
  decodeAgeCursor,
  encodeAgeCursor,
} from './pagination.ts';

/** What a wallet connection is asked for, in ages: (before, after) bound it, first/last take from it. */
interface AgeWindow {
  first: number | undefined;
  last: number | undefined;
  /** Only items older than this age (an `after` cursor's). */
  olderThan: number;
  /** Only items newer than this age (a `before` cursor's). */
  newerThan: number;
}

function ageWindow(scope: string, args: ConnectionArgs): AgeWindow {
  let first = checkCount(args.first, 'first');
  const last = checkCount(args.last, 'last');
  if (first === undefined && last === undefined) first = DEFAULT_WINDOW;
  const after = args.after ? decodeAgeCursor(scope, args.after, 'after') : null;
  const before = args.before ? decodeAgeCursor(scope, args.before, 'before') : null;
  return {
    first,
    last,
    olderThan: after ? after.offset : Number.POSITIVE_INFINITY,
    newerThan: before ? before.offset : -1,
  };
}

interface WalletWindow<T> {
  /** Newest first. */
  items: Aged<T>[];
  /** Called only when selected: without the index they may read further. */
  hasNextPage: () => boolean | Promise<boolean>;
  hasPreviousPage: () => boolean | Promise<boolean>;
  totalCount: () => Promise<number>;
}

/**
 * A connection over one wallet's items of a merchant-wide list, its cursors holding ages
 * (encodeAgeCursor): read from the merchant's wallet index when it is up to date, else by a walk
 * (docs/ids-and-connections.md). `filter` (a status filter) applies to the wallet's items as read;
 * `counted` is the filtered merchant list, whose walk counts them for totalCount.
 */
export async function resolveWalletConnection<T extends ListItem>(
  scope: string,
  args: ConnectionArgs,
  reader: MerchantListReader<T>,
  walletId: string,
  filter?: { matches: (item: T) => boolean; counted: MerchantListReader<T> },
): Promise<ConnectionShape<T>> {
  const window = ageWindow(scope, args);
  let result: WalletWindow<T> | null = null;
  try {
    const index = await reader.index();
    if (index) result = await fromIndex(reader, index, walletId, window, filter);
    result ??= await fromWalk(reader, walletId, window, filter).catch(async (error: unknown) => {
      // The walk waited for the index's build (wallet-lists.ts, coldWalk): read from it instead.
      if (!(error instanceof IndexReady)) throw error;
      const built = await reader.index();
      const read = built && (await fromIndex(reader, built, walletId, window, filter));
      if (!read) throw error;
      return read;
    });
  } catch (error) {
    throw withAdvice(error, reader);
  }
  const { items } = result;
  const edges = items.map(({ age, item }) => new Edge(scope, age, item, encodeAgeCursor));
  const guarded = <V>(value: V | Promise<V>): V | Promise<V> =>
    value instanceof Promise
      ? value.catch((error: unknown) => Promise.reject(withAdvice(error, reader)))
      : value;
  return {
    edges,
    pageInfo: {
      // GraphQL awaits a promise in place of the boolean: read further only when selected.
      get hasNextPage(): boolean {
        return guarded(result.hasNextPage()) as boolean;
      },
      get hasPreviousPage(): boolean {
        return guarded(result.hasPreviousPage()) as boolean;
      },
      get startCursor() {
        return edges[0]?.cursor ?? null;
      },
      get endCursor() {
        return edges.at(-1)?.cursor ?? null;
      },
    },
    totalCount: async () => guarded(result.totalCount()),
  };
}

/** The index position of the first age above `age` in ascending `ages`. */
function above(ages: Int32Array, age: number): number {
  let lo = 0;
  let hi = ages.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((ages[mid] as number) <= age) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Ages read at once when a status filter decides which of the wallet's items count. */
const FILTERED_BATCH = 100;

async function fromIndex<T extends ListItem>(
  reader: MerchantListReader<T>,
  index: ListIndex,
  walletId: string,
  window: AgeWindow,
  filter: { matches: (item: T) => boolean; counted: MerchantListReader<T> } | undefined,
): Promise<WalletWindow<T> | null> {
  const ages = index.agesOf(walletId);
  // [lo, hi): the wallet's ages between the cursors; ascending, so the newest is at hi - 1.
  let lo = above(ages, window.newerThan);
  let hi = Number.isFinite(window.olderThan) ? above(ages, window.olderThan - 1) : ages.length;
  if (hi < lo) hi = lo;
  if (!filter) {
    if (window.first !== undefined) lo = Math.max(lo, hi - window.first);
    if (window.last !== undefined) hi = Math.min(hi, lo + window.last);
    const wanted = Array.from(ages.subarray(lo, hi)).reverse();
    const read = wanted.length > 0 ? await reader.readAges(index, wanted, walletId) : new Map<number, T>();
    if (!read) return null;
    const total = ages.length;
    return {
      items: wanted.map((age) => ({ age, item: read.get(age) as T })),
      hasNextPage: () => lo > 0,
      hasPreviousPage: () => hi < total,
      totalCount: async () => total,
    };
  }
  // With a status filter: read the wallet's items in turn (newest first for `first`, oldest first
  // for `last` alone) until the window is filled.
  const newestFirst = window.first !== undefined;
  const want = newestFirst ? (window.first as number) : (window.last as number);
  const items: Aged<T>[] = [];
  let cursor = newestFirst ? hi : lo;
  while (items.length < want && (newestFirst ? cursor > lo : cursor < hi)) {
    const batch = newestFirst
      ? Array.from(ages.subarray(Math.max(lo, cursor - FILTERED_BATCH), cursor)).reverse()
      : Array.from(ages.subarray(cursor, Math.min(hi, cursor + FILTERED_BATCH)));
    cursor = newestFirst ? cursor - batch.length : cursor + batch.length;
    const read = await reader.readAges(index, batch, walletId);
    if (!read) return null;
    for (const age of batch) {
      const item = read.get(age) as T;
      if (filter.matches(item) && items.length < want) items.push({ age, item });
    }
  }
  if (!newestFirst) items.reverse();
  let shown = items;
  if (newestFirst && window.last !== undefined) shown = items.slice(Math.max(0, items.length - window.last));
  const oldest = shown.at(-1)?.age;
  const newest = shown[0]?.age;
  return {
    items: shown,
    // Whether the wallet has items past the window; they may not match the filter (the next page
    // is then empty, with hasNextPage false).
    hasNextPage: () => (oldest === undefined ? lo > 0 : above(ages, oldest - 1) > 0),
    hasPreviousPage: () => (newest === undefined ? hi < ages.length : above(ages, newest) < ages.length),
    totalCount: () => countWalk(filter.counted, walletId),
  };
}

async function fromWalk<T extends ListItem>(
  reader: MerchantListReader<T>,
  walletId: string,
  window: AgeWindow,
  filter: { matches: (item: T) => boolean; counted: MerchantListReader<T> } | undefined,
): Promise<WalletWindow<T>> {
  const matches = filter?.matches;
  // `last` alone reads from the oldest end (or the `before` cursor) towards the newer.
  const newer = window.first === undefined;
  const direction: Direction = newer ? 'newer' : 'older';
  const from = newer
    ? window.newerThan < 0
      ? null
      : window.newerThan
    : Number.isFinite(window.olderThan)
      ? window.olderThan
      : null;
  const bound = newer ? window.olderThan : window.newerThan;
  const inBounds = newer ? (age: number) => age < bound : (age: number) => age > bound;
  const want = newer ? (window.last as number) : (window.first as number);
  const walk = reader.walk(direction, from);
  const consumer: Consumer<T> = walk.join({
    walletId,
    filter: matches,
    want,
    keep: true,
    items: [],
    seen: 0,
  });
  const total = () => countWalk(filter?.counted ?? reader, walletId);
  await walk.fill(consumer);
  let items = consumer.items.filter(({ age }) => inBounds(age));
  const cut = items.length < consumer.items.length;
  if (newer) items.reverse();
  if (!newer && window.last !== undefined) items = items.slice(Math.max(0, items.length - window.last));
  /** Whether the walk finds one more of the wallet's items past what it kept. */
  const more = async (): Promise<boolean> => {
    if (cut) return false;
    if (consumer.seen > consumer.items.length) return true;
    if (walk.exhausted) return false;
    consumer.want = consumer.items.length + 1;
    await walk.fill(consumer);
    return consumer.seen > consumer.items.length;
  };
  return {
    items,
    hasNextPage: newer ? () => window.newerThan >= 0 : more,
    hasPreviousPage: newer ? more : () => Number.isFinite(window.olderThan),
    totalCount: total,
  };
}

/** The wallet's items in the whole (filtered) merchant list: a walk to the end that keeps none. */
async function countWalk<T extends ListItem>(
  reader: MerchantListReader<T>,
  walletId: string,
): Promise<number> {
  const index = reader.indexed ? await reader.index() : null;
  if (index) return index.agesOf(walletId).length;
  const walk = reader.walk('older', null);
  const consumer = walk.join({ walletId, want: Number.POSITIVE_INFINITY, keep: false, items: [], seen: 0 });
  try {
    await walk.fill(consumer);
  } catch (error) {
    // The walk waited for the index's build: count from it.
    const built = error instanceof IndexReady && (await reader.index());
    if (!built) throw error;
    return built.agesOf(walletId).length;
  }
  return consumer.seen;
}

/** A call budget spent on a wallet list: the advice says what helps (the index, or a smaller window). */
function withAdvice(error: unknown, reader: { list: string; indexing: boolean; total: number }): unknown {
  if (error instanceof IndexReady)
    return new GatewayError(
      'QUERY_LIMIT_EXCEEDED',
      "The gateway has just indexed this merchant's lists; retry now, when the same page costs a few calls.",
      { extensions: { retryAfterSeconds: 1, indexing: true } },
    );
  if (!(error instanceof GatewayError) || error.code !== 'QUERY_LIMIT_EXCEEDED') return error;
  // A cold index's answer (wallet-lists.ts) says what it is already.
  if (error.extensions.indexing === true) return error;
  const list = reader.list === 'deposits' ? 'deposits' : 'withdrawal intents';
  const advice = reader.indexing
    ? "The gateway is indexing this merchant's lists in the background; retry in a minute, when the same page costs a few calls."
    : 'Ask for totalCount or `last` without `before` only where needed, and page with cursors.';
  return new GatewayError(
    'QUERY_LIMIT_EXCEEDED',
    `Reading this wallet's ${list} needed more calls to the REST API than one request may make: the REST API has no wallet filter, and the merchant's list holds ${reader.total} items. ${advice}`,
    { extensions: error.extensions, cause: error },
  );
}
