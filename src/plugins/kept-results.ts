import { LRUCache } from 'lru-cache';
import { type CachedReads, entryBytes, type Read, type RequestReads } from '../upstream/reads.ts';

/** A GraphQL result kept by query deduplication, with its serialised text (what it is measured by). */
export interface KeptResult<T = unknown> {
  result: T;
  text: string;
}

/** The share of kept results' bytes one caller may take per TTL, so one key cannot push out the rest. */
export const KEPT_SHARE_PER_CALLER = 1 / 16;

interface Entry extends KeptResult {
  reads: readonly Read[];
}

/**
 * The results query deduplication keeps after their execution: a result is kept while every REST
 * answer it was built from stays in the upstream micro-cache, so keeping it changes no answer and
 * no freshness. Not kept: a result that read an answer the cache does not keep (a 404, an error, a
 * `fresh` read, a TTL of 0, one too large), or no REST answer at all (so every kept result read a
 * 2xx for its key), or past the caller's KEPT_SHARE_PER_CALLER in the current TTL. Bounded by
 * CachedReads.keptMaxBytes, counted as REST answers are (entryBytes), least recently used first out.
 */
export class KeptResults {
  private readonly entries: LRUCache<string, Entry> | null;
  /** Bytes of results each caller scope kept in the current TTL window. */
  private readonly keptBytes = new LRUCache<string, { bytes: number; since: number }>({ max: 10_000 });
  private readonly bytesPerCaller: number;
  private readonly cache: CachedReads;

  constructor(cache: CachedReads) {
    this.cache = cache;
    this.bytesPerCaller = cache.keptMaxBytes * KEPT_SHARE_PER_CALLER;
    this.entries =
      cache.ttlMs > 0
        ? new LRUCache<string, Entry>({
            maxSize: Math.max(1, cache.keptMaxBytes),
            sizeCalculation: (entry, key) => entryBytes(entry.text, key),
            ttl: cache.ttlMs,
            perf: { now: () => cache.now() },
            ttlResolution: 0,
          })
        : null;
  }

  /** The result kept under `key` (which starts with the caller's generation scope), while it is current. */
  get<T>(key: string): KeptResult<T> | undefined {
    const kept = this.entries?.get(key);
    if (!kept) return undefined;
    // A hit on the kept result is a hit on what it read: those stay as recently used as it is.
    if (!this.cache.isCurrent(kept.reads)) {
      this.entries?.delete(key);
      return undefined;
    }
    return kept as KeptResult<T>;
  }

  /** Keeps a result the request that made `reads` executed in caller scope `scope`; false when it is not kept. */
  keep(scope: string, key: string, kept: KeptResult, reads: RequestReads): boolean {
    const until = reads.currentUntil;
    if (!this.entries || !Number.isFinite(until) || reads.cached.length === 0) return false;
    const now = this.cache.now();
    const ttl = Math.floor(Math.min(until - now, this.cache.ttlMs));
    if (!(ttl >= 1)) return false;
    const size = entryBytes(kept.text, key);
    let share = this.keptBytes.get(scope);
    if (!share || now - share.since >= this.cache.ttlMs) {
      // A result kept in an earlier window leaves by the end of this one: at most two shares live.
      share = { bytes: 0, since: now };
      this.keptBytes.set(scope, share);
    }
    if (share.bytes + size > this.bytesPerCaller) return false;
    share.bytes += size;
    this.entries.set(key, { ...kept, reads: reads.cached }, { ttl, size });
    return this.entries.has(key);
  }
}
