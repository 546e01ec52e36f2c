import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';
import { deepFreeze } from '../shared/deep-freeze.ts';
import type { UpstreamObserver, UpstreamResponse } from './call.ts';
import { type InFlightCall, InFlightCalls } from './coalescing.ts';
import { isOkEnvelope } from './envelope.ts';
import { entryBytes, type Read, type RequestReads } from './reads.ts';

/**
 * The client's memory across requests: a micro-cache of 2xx GET envelopes and the coalescing of
 * identical GETs in flight (coalescing.ts), every key led by the caller's scope (caller-scope.ts),
 * so an entry only ever answers the key that fetched it. Cached answers are parsed and frozen.
 */

export interface ResponseCacheOptions {
  /** 0 disables caching; coalescing stays on. */
  ttlMs: number;
  maxBytes: number;
  now?: () => number;
  /** Default: while the event loop has idle time (coalescing.ts). */
  staggerJoiners?: () => boolean;
  observer?: Pick<UpstreamObserver, 'cache'>;
}

/** A cached 2xx answer, when it leaves the cache, and a serial that tells it from a later answer. */
interface CachedResponse extends UpstreamResponse {
  until: number;
  serial: number;
}

export class ResponseCache {
  private readonly entries: LRUCache<string, CachedResponse> | null;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private serial = 0;
  private readonly inFlight: InFlightCalls;
  /** A scope's generation is part of every key: invalidation bumps it. */
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
            sizeCalculation: (entry, key) => entryBytes(entry.text, key),
            ttl: options.ttlMs,
            // A test clock must be read on every access, not memoised between timer ticks.
            ...(options.now && { perf: { now: options.now }, ttlResolution: 0 }),
          })
        : null;
  }

  /** GET `path` in a scope: a hit, a join of the call in flight, or a miss (`fetch`); `reads` notes which. */
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

  /** Whether each of `reads` is still the answer cached under its key; counts as a hit on each. */
  isCurrent(reads: readonly Read[]): boolean {
    if (!this.entries) return false;
    for (const read of reads) {
      if (this.entries.get(read.key)?.serial !== read.serial) return false;
    }
    return true;
  }

  /** The scope and its generation: reads in one generation scope may share an answer. */
  generationScope(scope: string): string {
    return `${scope}:${this.generations.get(scope) ?? 0}`;
  }

  /** Ends everything cached for this caller, e.g. after it created a withdrawal. */
  invalidate(scope: string): void {
    this.generations.set(scope, (this.generations.get(scope) ?? 0) + 1);
  }

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

  /** Caches a 2xx well-formed envelope: where, or null when it is not kept. */
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
