import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';
import { deepFreeze } from '../shared/deep-freeze.ts';
import type { UpstreamObserver, UpstreamResponse } from './call.ts';
import { type InFlightCall, InFlightCalls } from './coalescing.ts';
import { isOkEnvelope } from './envelope.ts';
import { entryBytes, type Read, type RequestReads } from './reads.ts';

/**
 * The upstream client's shared memory across requests: a per-key micro-cache of successful GET
 * responses, and coalescing of identical GETs in flight (coalescing.ts). Every key starts with the
 * caller's scope, an HMAC of its Authorization value under a per-process (or the fleet's) secret
 * (caller-scope.ts), so an entry can only ever answer the same key that fetched it, and the key
 * itself is never stored. It keeps REST answers only; query deduplication keeps its results itself
 * (plugins/kept-results.ts) and asks `isCurrent` whether what they read is still here.
 */

export interface ResponseCacheOptions {
  /** How long a 2xx GET response is served from memory; 0 disables caching (coalescing stays on). */
  ttlMs: number;
  /** Upper bound on the bytes of cached answers; least recently used entries go first. */
  maxBytes: number;
  /** Clock, for tests. */
  now?: () => number;
  /** Whether to hand a coalesced answer out one turn per waiter (coalescing.ts); default: while the loop has idle time. */
  staggerJoiners?: () => boolean;
  /** Counts hits, misses and coalesced waits (metrics). */
  observer?: Pick<UpstreamObserver, 'cache'>;
}

/** A cached 2xx answer, when it leaves the cache, and a serial that tells it from a later answer. */
interface CachedResponse extends UpstreamResponse {
  until: number;
  serial: number;
}

export class ResponseCache {
  /**
   * Answers kept parsed: every hit hands out the same objects, as coalescing hands one answer to
   * every joiner, without a `JSON.parse` per hit (docs/benchmark.md#why-the-caches-are-built-this-way).
   * They are frozen from the moment they are cached, so no request can change another's answer.
   */
  private readonly entries: LRUCache<string, CachedResponse> | null;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private serial = 0;
  private readonly inFlight: InFlightCalls;
  /**
   * Invalidation bumps a scope's generation, which is part of every key: older entries (and GETs
   * still in flight when a withdrawal succeeded) become unreachable and age out. Bounded; a scope
   * forgotten here restarts at 0, by which time its old entries are far past their TTL.
   */
  private readonly generations = new LRUCache<string, number>({ max: 100_000 });
  private readonly observer: Pick<UpstreamObserver, 'cache'> | undefined;

  constructor(options: ResponseCacheOptions) {
    this.observer = options.observer;
    this.ttlMs = options.ttlMs;
    // The LRU's own clock by default (performance.now), so `until` and its TTLs agree.
    this.now = options.now ?? (() => performance.now());
    this.inFlight = new InFlightCalls(options.staggerJoiners);
    this.entries =
      options.ttlMs > 0
        ? new LRUCache<string, CachedResponse>({
            maxSize: options.maxBytes,
            // entryBytes: the text, its parsed objects, its key and a fixed overhead.
            sizeCalculation: (entry, key) => entryBytes(entry.text, key),
            ttl: options.ttlMs,
            // A test clock must be read on every access, not memoised between timer ticks.
            ...(options.now && { perf: { now: options.now }, ttlResolution: 0 }),
          })
        : null;
  }

  /**
   * The response for GET `path` in a caller's scope (CallerScopes.scopeOf): from the cache (hit),
   * from an identical call already in flight (join), or from `fetch` (miss; its 2xx answer is then
   * cached when it is a well-formed envelope). `reads` records which, and what was read.
   */
  async get(
    scope: string,
    path: string,
    fetch: () => Promise<UpstreamResponse>,
    reads?: RequestReads,
  ): Promise<UpstreamResponse> {
    const key = this.key(scope, path);
    const cached = this.entries?.get(key);
    if (cached) return this.hit(key, cached, reads);
    const pending = this.inFlight.find(key);
    if (pending) return this.join(pending, reads);
    return this.miss(key, fetch, reads);
  }

  /**
   * Whether every one of `reads` is still the answer in the cache (not expired, evicted or
   * replaced since): executing the query that read them again would read exactly them. A check is
   * a hit on each: they stay as recently used as what was built from them.
   */
  isCurrent(reads: readonly Read[]): boolean {
    if (!this.entries) return false;
    for (const read of reads) {
      if (this.entries.get(read.key)?.serial !== read.serial) return false;
    }
    return true;
  }

  /**
   * The scope plus its generation: two reads in the same generation scope may share one answer
   * (same caller, and no invalidation between them).
   */
  generationScope(scope: string): string {
    return `${scope}:${this.generations.get(scope) ?? 0}`;
  }

  /** Ends everything cached for this caller, e.g. after it created a withdrawal. */
  invalidate(scope: string): void {
    this.generations.set(scope, (this.generations.get(scope) ?? 0) + 1);
  }

  /** Distinct GETs in flight that identical calls would join. */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  private hit(
    key: string,
    cached: CachedResponse,
    reads: RequestReads | undefined,
  ): Promise<UpstreamResponse> {
    reads?.hit({ key, serial: cached.serial, until: cached.until });
    this.observer?.cache('hit');
    return Promise.resolve(cached);
  }

  private join(pending: InFlightCall, reads: RequestReads | undefined): Promise<UpstreamResponse> {
    reads?.join();
    this.observer?.cache('coalesced');
    return this.inFlight.join(pending, () => reads?.read(pending.stored));
  }

  private miss(
    key: string,
    fetch: () => Promise<UpstreamResponse>,
    reads: RequestReads | undefined,
  ): Promise<UpstreamResponse> {
    this.observer?.cache('miss');
    const pending = this.inFlight.start(
      key,
      fetch().then((response) => {
        pending.stored = this.store(key, response);
        return response;
      }),
    );
    if (!reads) return pending.call;
    return pending.call.then((response) => {
      reads.read(pending.stored);
      return response;
    });
  }

  /** Caches a 2xx well-formed envelope; where it is cached, or null when it is not. */
  private store(key: string, response: UpstreamResponse): Read | null {
    if (!this.entries || response.status < 200 || response.status >= 300 || !isOkEnvelope(response.json)) {
      return null;
    }
    const cached: CachedResponse = {
      status: response.status,
      text: response.text,
      json: deepFreeze(response.json),
      until: this.now() + this.ttlMs,
      serial: ++this.serial,
    };
    this.entries.set(key, cached);
    // An answer over the whole bound is not stored: results built from it are not kept.
    return this.entries.has(key) ? { key, serial: cached.serial, until: cached.until } : null;
  }

  private key(scope: string, path: string): string {
    return `${this.generationScope(scope)}:GET:${path}`;
  }
}
