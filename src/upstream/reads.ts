/** One cached REST answer a request read: its cache key, the serial that tells it from a later answer, and when it leaves the cache. */
export interface Read {
  readonly key: string;
  readonly serial: number;
  readonly until: number;
}

/**
 * What one GraphQL request's GETs went through (its Caller holds it). The micro-cache
 * (ResponseCache.get) writes every field; the client notes a `fresh` read, which skips the cache.
 * Query deduplication keeps a result only while `cached` is still current (kept-results.ts).
 */
export class RequestReads {
  #fromCache = 0;
  #joined = 0;
  #uncached = false;
  #until = Number.POSITIVE_INFINITY;
  readonly #cached: Read[] = [];

  /** GETs answered by the micro-cache (the access log's `cacheHits`). */
  get fromCache(): number {
    return this.#fromCache;
  }

  /** GETs that joined an identical call in flight (the access log's `coalesced`). */
  get joined(): number {
    return this.#joined;
  }

  /** The cached answers it read, in order. */
  get cached(): readonly Read[] {
    return this.#cached;
  }

  /**
   * When the first of the answers it read leaves the cache: until then, executing the same query
   * again would read exactly these answers. -Infinity once it read an answer the cache does not
   * keep (a `fresh` read, an error, a 404, any read with the TTL at 0); +Infinity before its first read.
   */
  get currentUntil(): number {
    return this.#uncached ? Number.NEGATIVE_INFINITY : this.#until;
  }

  /** A GET answered from the cache. */
  hit(read: Read): void {
    this.#fromCache++;
    this.read(read);
  }

  /** A GET that joined an identical call in flight (its answer is noted by `read` once it came). */
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

/**
 * What a cached answer or kept result costs in memory per character of its text: the text and its
 * parsed objects (docs/benchmark.md#why-the-caches-are-built-this-way).
 */
export const ENTRY_BYTES_PER_CHAR = 2.5;

/**
 * What any entry costs besides its text: its key (counted on top, two bytes a character), the
 * objects around it, the LRU's slots. Without it, many tiny entries (a kept `totalCount`) would
 * hold far more memory than the bound says.
 */
export const ENTRY_OVERHEAD_BYTES = 1024;

/** The bytes an entry counts against its bound: a REST answer (cache.ts), a kept result (kept-results.ts). */
export function entryBytes(text: string, key: string): number {
  return Math.ceil(text.length * ENTRY_BYTES_PER_CHAR + key.length * 2 + ENTRY_OVERHEAD_BYTES);
}

/**
 * The share of the upstream cache's byte bound (UPSTREAM_CACHE_MAX_BYTES) that kept results hold;
 * the REST answers hold the rest (MerchantWalletClient's ResponseCache).
 */
export const KEPT_RESULTS_SHARE = 1 / 4;

/** The micro-cache as query deduplication's kept results see it (MerchantWalletClient.cachedReads). */
export interface CachedReads {
  /** Kept results' share of UPSTREAM_CACHE_MAX_BYTES (KEPT_RESULTS_SHARE by default); the REST answers hold the rest. */
  readonly keptMaxBytes: number;
  /** How long an answer stays cached; 0: none is, so no result is kept. */
  readonly ttlMs: number;
  /** The cache's clock. */
  now(): number;
  /** Whether every one of `reads` is still the answer cached under its key (ResponseCache.isCurrent). */
  isCurrent(reads: readonly Read[]): boolean;
}
