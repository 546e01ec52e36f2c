import { LRUCache } from 'lru-cache';
import type { Page } from '../upstream/types.ts';

/**
 * Where each wallet's items lie in a merchant's list (docs/wallet-index.md). An item's *age*, its
 * position from the oldest end (`total - 1 - position` in a page read when the list held `total`),
 * never changes; the index records, for each age below `covered`, the item's wallet and a 32-bit
 * fingerprint of its id, and each wallet's ages. It only says where to look: a request reads every
 * item it shows, and an item not where the index says discards the index. A page older than the
 * index (the micro-cache's) is no contradiction: its ages are exact for its own total.
 */

export interface ListItem {
  id: string;
  wallet: { id: string };
}

export interface AgedPage<T> {
  /** The list's length when the REST API answered. */
  total: number;
  items: { age: number; item: T }[];
}

/** The page of a list read at `offset` (its first item's position), with each item's age. */
export function agedPage<T>(page: Page<T>, offset: number): AgedPage<T> {
  const total = page.paging.totalCount;
  return { total, items: page.items.map((item, i) => ({ age: total - 1 - (offset + i), item })) };
}

/** FNV-1a of an id: 32 bits, enough to notice an item that is not the one the index expects. */
export function fingerprint(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Wallets one index can tell apart (walletByAge is a Uint16Array). */
const MAX_WALLETS = 0xffff;

/** A typed array that grows by doubling; `length` is what is used of it. */
class Growable<A extends Int32Array | Uint32Array | Uint16Array> {
  array: A;
  length = 0;
  private readonly make: (size: number) => A;

  constructor(make: (size: number) => A, initial = 256) {
    this.make = make;
    this.array = make(initial);
  }

  push(value: number): void {
    if (this.length === this.array.length) {
      const bigger = this.make(this.array.length * 2);
      bigger.set(this.array);
      this.array = bigger;
    }
    this.array[this.length++] = value;
  }

  get bytes(): number {
    return this.array.byteLength;
  }

  view(): A {
    return this.array.subarray(0, this.length) as A;
  }
}

/** Ages per chunk of an index the fleet shares (redis/wallet-index-chunks.ts). */
export const INDEX_CHUNK = 1024;

/** INDEX_CHUNK consecutive ages: for each, its wallet (a place in `walletIds`) and fingerprint. */
export interface IndexChunk {
  walletIds: string[];
  ordinals: Uint16Array;
  fingerprints: Uint32Array;
}

export type Contradiction = 'moved' | 'too-many-wallets' | 'too-big';

export class ListIndex {
  private readonly walletIds: string[] = [];
  private readonly ordinals = new Map<string, number>();
  private readonly walletByAge = new Growable((n) => new Uint16Array(n));
  private readonly fingerprintByAge = new Growable((n) => new Uint32Array(n));
  private readonly agesByWallet: Growable<Int32Array>[] = [];
  /** Set once the index contradicted the REST API or outgrew its bound: nothing it says is used. */
  discarded: Contradiction | null = null;
  /** The longest total a page it absorbed had: how far behind the list the index may be. */
  seen = 0;

  get covered(): number {
    return this.walletByAge.length;
  }

  get bytes(): number {
    let bytes = this.walletByAge.bytes + this.fingerprintByAge.bytes + 64 * this.walletIds.length;
    for (const ages of this.agesByWallet) bytes += ages.bytes;
    return bytes;
  }

  /** The wallet's ages, ascending; empty when it has none. A view: do not keep it past the request. */
  agesOf(walletId: string): Int32Array {
    const ordinal = this.ordinals.get(walletId);
    return ordinal === undefined
      ? new Int32Array(0)
      : (this.agesByWallet[ordinal] as Growable<Int32Array>).view();
  }

  /** Whether the item read at `age` is the one indexed there (never for an age at or past `covered`). */
  matches(age: number, item: ListItem): boolean {
    if (age < 0 || age >= this.covered) return false;
    const ordinal = this.walletByAge.array[age] as number;
    return (
      this.walletIds[ordinal] === item.wallet.id && this.fingerprintByAge.array[age] === fingerprint(item.id)
    );
  }

  /** Checks a page's indexed ages and appends those that continue; false (discarded) when contradicted. */
  absorb(page: AgedPage<ListItem>): boolean {
    if (this.discarded) return false;
    this.seen = Math.max(this.seen, page.total);
    for (let i = page.items.length - 1; i >= 0; i--) {
      const { age, item } = page.items[i] as AgedPage<ListItem>['items'][number];
      if (age < this.covered) {
        if (!this.matches(age, item)) return this.discard('moved');
      } else if (age === this.covered) {
        if (!this.append(item)) return false;
      }
    }
    return true;
  }

  /** Chunk `n` (ages from n × INDEX_CHUNK), when whole. */
  chunk(n: number): IndexChunk | undefined {
    const start = n * INDEX_CHUNK;
    if (start + INDEX_CHUNK > this.covered) return undefined;
    const local = new Map<number, number>();
    const walletIds: string[] = [];
    const ordinals = new Uint16Array(INDEX_CHUNK);
    for (let i = 0; i < INDEX_CHUNK; i++) {
      const ordinal = this.walletByAge.array[start + i] as number;
      let place = local.get(ordinal);
      if (place === undefined) {
        place = walletIds.length;
        local.set(ordinal, place);
        walletIds.push(this.walletIds[ordinal] as string);
      }
      ordinals[i] = place;
    }
    const fingerprints = this.fingerprintByAge.array.slice(start, start + INDEX_CHUNK);
    return { walletIds, ordinals, fingerprints };
  }

  /** Appends a chunk another replica built, when it continues the index. */
  addChunk(n: number, chunk: IndexChunk): boolean {
    if (this.discarded || n * INDEX_CHUNK !== this.covered) return false;
    for (let i = 0; i < INDEX_CHUNK; i++) {
      const walletId = chunk.walletIds[chunk.ordinals[i] as number] as string;
      if (!this.appendFingerprint(walletId, chunk.fingerprints[i] as number)) return false;
    }
    return true;
  }

  discard(reason: Contradiction): false {
    this.discarded ??= reason;
    return false;
  }

  private append(item: ListItem): boolean {
    return this.appendFingerprint(item.wallet.id, fingerprint(item.id));
  }

  private appendFingerprint(walletId: string, print: number): boolean {
    let ordinal = this.ordinals.get(walletId);
    if (ordinal === undefined) {
      if (this.walletIds.length >= MAX_WALLETS) return this.discard('too-many-wallets');
      ordinal = this.walletIds.length;
      this.walletIds.push(walletId);
      this.ordinals.set(walletId, ordinal);
      this.agesByWallet.push(new Growable((n) => new Int32Array(n), 16));
    }
    const age = this.covered;
    this.walletByAge.push(ordinal);
    this.fingerprintByAge.push(print);
    (this.agesByWallet[ordinal] as Growable<Int32Array>).push(age);
    return true;
  }
}

export type IndexedList = 'deposits' | 'withdrawalIntents';

/** Every merchant list's index in this process, by owner: `maxBytes` in all, a quarter of it per list. */
export class WalletIndexes {
  readonly maxBytes: number;
  private readonly indexes: LRUCache<string, ListIndex>;
  /** The sum of the indexes' bytes as last counted (they grow between: see resize). */
  private bytes = 0;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
    this.indexes = new LRUCache<string, ListIndex>({
      max: 100_000,
      dispose: (index) => {
        this.bytes -= sized.get(index) ?? 0;
        sized.delete(index);
      },
    });
    const sized = new WeakMap<ListIndex, number>();
    this.sized = sized;
  }

  private readonly sized: WeakMap<ListIndex, number>;
  private readonly keys = new WeakMap<ListIndex, string>();

  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  /** The list's index, made empty on first use; undefined when indexes are off. */
  of(scope: string, list: IndexedList): ListIndex | undefined {
    if (!this.enabled) return undefined;
    const key = `${scope}|${list}`;
    let index = this.indexes.get(key);
    // A contradicted index starts over; one past its bounds stays, a tombstone, so it is not rebuilt.
    if (!index || index.discarded === 'moved') {
      if (index) this.indexes.delete(key);
      index = new ListIndex();
      this.indexes.set(key, index);
      this.sized.set(index, 0);
      this.keys.set(index, key);
    }
    return index;
  }

  /** Whether a request can use the index: built, at most `behind` items behind the longest list seen. */
  ready(scope: string, list: IndexedList, behind = 1000): boolean {
    const index = this.indexes.peek(`${scope}|${list}`);
    return (
      index !== undefined && !index.discarded && index.covered > 0 && index.seen - index.covered <= behind
    );
  }

  /** Moves `from`'s indexes to `to` unless `to` has one built: a renamed group builds nothing again. */
  move(from: string, to: string): void {
    for (const list of ['deposits', 'withdrawalIntents'] as const) {
      const index = this.indexes.peek(`${from}|${list}`);
      const there = this.indexes.peek(`${to}|${list}`);
      if (!index || index.discarded || (there && !there.discarded && there.covered > 0)) continue;
      const key = `${to}|${list}`;
      // Its bytes leave with the delete (dispose) and are counted again by resize.
      this.indexes.delete(`${from}|${list}`);
      this.indexes.set(key, index);
      this.keys.set(index, key);
      this.sized.set(index, 0);
      this.resize(index);
    }
  }

  /** Forgets the list's index (it contradicted the REST API); the next use starts a new one. */
  forget(scope: string, list: IndexedList): void {
    this.indexes.delete(`${scope}|${list}`);
  }

  /** Counts an index's bytes after it grew: past a quarter of the bound it is 'too-big'; the LRU evicts. */
  resize(index: ListIndex): void {
    const before = this.sized.get(index);
    if (before === undefined) return;
    const now = index.bytes;
    this.sized.set(index, now);
    this.bytes += now - before;
    if (now > this.maxBytes / 4) {
      index.discard('too-big');
      const key = this.keys.get(index);
      const tombstone = new ListIndex();
      tombstone.discard('too-big');
      if (key !== undefined) this.indexes.set(key, tombstone);
    }
    while (this.bytes > this.maxBytes && this.indexes.size > 0) {
      const oldest = this.indexes.rkeys().next().value as string | undefined;
      if (oldest === undefined) break;
      this.indexes.delete(oldest);
    }
  }

  get heldBytes(): number {
    return this.bytes;
  }

  get size(): number {
    return this.indexes.size;
  }
}
