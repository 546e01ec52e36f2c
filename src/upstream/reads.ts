/** A cached answer a request read: its key, the serial that tells it from a later answer, its expiry. */
export interface Read {
  readonly key: string;
  readonly serial: number;
  readonly until: number;
}

/**
 * What one GraphQL request's GETs went through (Caller.reads), written by the micro-cache and by the
 * client for a `fresh` read; query deduplication keeps a result only while `cached` is current.
 */
export class RequestReads {
  #fromCache = 0;
  #joined = 0;
  #uncached = false;
  #until = Number.POSITIVE_INFINITY;
  readonly #cached: Read[] = [];

  /** The access log's `cacheHits`. */
  get fromCache(): number {
    return this.#fromCache;
  }

  /** The access log's `coalesced`. */
  get joined(): number {
    return this.#joined;
  }

  get cached(): readonly Read[] {
    return this.#cached;
  }

  /** When the first answer it read leaves the cache: -Infinity once one was not cached; +Infinity before. */
  get currentUntil(): number {
    return this.#uncached ? Number.NEGATIVE_INFINITY : this.#until;
  }

  hit(read: Read): void {
    this.#fromCache++;
    this.read(read);
  }

  /** Its answer is noted by `read` once it came. */
  join(): void {
    this.#joined++;
  }

  /** An answer it read: cached (`read`), or one the cache does not keep (null). */
  read(read: Read | null): void {
    if (!read) {
      this.#uncached = true;
      return;
    }
    this.#until = Math.min(this.#until, read.until);
    this.#cached.push(read);
  }
}

/** Memory per character, parsed objects included (docs/benchmark.md#why-the-caches-are-built-this-way). */
export const ENTRY_BYTES_PER_CHAR = 2.5;

/** What an entry costs besides its text and key: without it, many tiny entries would exceed the bound. */
export const ENTRY_OVERHEAD_BYTES = 1024;

/** The bytes an entry counts against its bound: a REST answer (cache.ts), a kept result (kept-results.ts). */
export function entryBytes(text: string, key: string): number {
  return Math.ceil(text.length * ENTRY_BYTES_PER_CHAR + key.length * 2 + ENTRY_OVERHEAD_BYTES);
}

/** Kept results' share of UPSTREAM_CACHE_MAX_BYTES; the REST answers hold the rest. */
export const KEPT_RESULTS_SHARE = 1 / 4;

/** The micro-cache as kept results see it (MerchantWalletClient.cachedReads). */
export interface CachedReads {
  readonly keptMaxBytes: number;
  /** 0: nothing is cached, so no result is kept. */
  readonly ttlMs: number;
  now(): number;
  isCurrent(reads: readonly Read[]): boolean;
}
