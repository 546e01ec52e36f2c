import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';
import { deepFreeze } from '../deep-freeze.ts';
import type { UpstreamObserver, UpstreamResponse } from './call.ts';
import { isOkEnvelope } from './envelope.ts';

/**
 * The upstream client's shared memory across requests: a per-merchant micro-cache of successful GET
 * responses, and coalescing of identical GETs in flight. Every key starts with the caller's scope,
 * an HMAC of its Authorization value under a per-process (or the fleet's) secret (caller-scope.ts),
 * so an entry can only ever answer the same key that fetched it, and the key itself is never stored.
 */

/**
 * An upstream GET in flight, and the turn of the last request that joined it. Without turns, all
 * the requests waiting on one answer resume in the same tick and finish their GraphQL work back to
 * back: a request arriving meanwhile waits behind all of them before its own upstream call even
 * starts. Handing the answer out one event-loop turn (setImmediate) per waiter lets the server read
 * new requests in between, so their upstream calls start while the others finish.
 *
 * Turns spread the waiters out in time, and requests spread out coalesce less on their next call,
 * so turns are only taken where that is cheap:
 * - for small answers (≤ 32 KB, such as a wallet list): a call that brings a page of 250 deposits
 *   costs the REST API and this process far more than the turns save, and must stay shared;
 * - for no longer than the call itself took: past that, the remaining waiters get it at once;
 * - never while the event loop is saturated: then nothing can start earlier, and every extra turn
 *   is CPU taken from the requests.
 */
interface InFlight {
  call: Promise<UpstreamResponse>;
  /** Until when its answer stays in the micro-cache (`Served.cachedUntil`); -Infinity when it is not kept. */
  until: number;
  /** The cached answer's serial (CachedResponse), once it is cached. */
  serial: number;
  turn: Promise<void>;
  startedAt: number;
  /** When the call settled, how long it had taken, and whether its answer was small. */
  settledAt: number;
  took: number;
  small: boolean;
}

/** Answers up to this size are handed out in turns (see InFlight). */
const TURNS_MAX_BYTES = 32 * 1024;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface ResponseCacheOptions {
  /** How long a 2xx GET response is served from memory; 0 disables caching (coalescing stays on). */
  ttlMs: number;
  /** Upper bound on the bytes of cached bodies; least recently used entries go first. */
  maxBytes: number;
  /** Clock, for tests. */
  now?: () => number;
  /** Whether to hand a coalesced answer out one turn per waiter; default: while the loop has idle time. */
  staggerJoiners?: () => boolean;
  /** Counts hits, misses and coalesced waits (metrics). */
  observer?: Pick<UpstreamObserver, 'cache'>;
}

/**
 * True while the event loop was less than `threshold` busy over the last `windowMs` (event loop
 * utilization, sampled at most once per window).
 */
export function loopHasIdleTime(threshold = 0.8, windowMs = 100): () => boolean {
  let sample = performance.eventLoopUtilization();
  let sampledAt = performance.now();
  let idle = true;
  return () => {
    const now = performance.now();
    if (now - sampledAt >= windowMs) {
      const current = performance.eventLoopUtilization();
      idle = performance.eventLoopUtilization(current, sample).utilization < threshold;
      sample = current;
      sampledAt = now;
    }
    return idle;
  };
}

/** What a cached answer costs in memory per character of its text: the text and its parsed objects. */
export const ENTRY_BYTES_PER_CHAR = 2.5;

/**
 * What any entry costs besides its text: its key (counted on top, two bytes a character), the
 * objects around the answer, the LRU's slots. Without it, many tiny entries (a kept `totalCount`)
 * would hold far more memory than the bound says.
 */
export const ENTRY_OVERHEAD_BYTES = 1024;

/** The bytes an entry counts against the bound. */
export function entryBytes(text: string, key: string): number {
  return Math.ceil(text.length * ENTRY_BYTES_PER_CHAR + key.length * 2 + ENTRY_OVERHEAD_BYTES);
}

/**
 * The share of the bound one caller's kept results may take per TTL: a key that sends many
 * variants of a large query must not push every other merchant's answers out of the cache.
 */
export const KEPT_SHARE_PER_CALLER = 1 / 16;

/**
 * What one GraphQL request's reads went through, counted by the cache (the request's Caller holds it).
 * `cachedUntil` is the moment the first of the REST answers it read leaves the micro-cache:
 * until then, executing the same query again would read exactly the same answers, so its result
 * may be kept that long (`keepResult`). -Infinity once it read an answer that is not cached (a
 * `fresh` read, an error, a 404, or any read with the TTL at 0); +Infinity before its first read.
 */
export interface Served {
  cached: number;
  coalesced: number;
  cachedUntil: number;
  /**
   * The cached answers it read, as pairs of key and serial: a result kept from this request
   * answers only while each of them is still the one in the cache (not evicted, not replaced).
   */
  reads?: (string | number)[];
  /** Set when query deduplication answered the request with another's result instead of executing it. */
  sharedResult?: 'in_flight' | 'kept';
}

/** A cached 2xx answer, when it leaves the cache, and a serial that tells it from a later answer. */
interface CachedResponse extends UpstreamResponse {
  until: number;
  serial: number;
}

/** A GraphQL result kept by query deduplication (keepResult), with its serialised text. */
export interface KeptResult<T = unknown> {
  result: T;
  text: string;
}

/** A kept result in the cache, with the cached answers it was built from (Served.reads). */
interface KeptEntry extends KeptResult {
  reads: readonly (string | number)[];
}

/** Notes, for kept results, that `served`'s request read this cached answer (or one not cached). */
function noteRead(served: Served, key: string, until: number, serial: number): void {
  served.cachedUntil = Math.min(served.cachedUntil, until);
  if (until === Number.NEGATIVE_INFINITY) return;
  if (served.reads) served.reads.push(key, serial);
  else served.reads = [key, serial];
}

export class ResponseCache {
  /**
   * Answers kept parsed: every hit hands out the same objects, as coalescing hands one answer to
   * every joiner, without a `JSON.parse` per hit (that parse made the defaults slower than no
   * cache at all: 12 % of a cached dashboard's CPU). They are frozen from the moment they are
   * parsed (wire.ts), so no request can change another's answer.
   */
  private readonly entries: LRUCache<string, CachedResponse | KeptEntry> | null;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private serial = 0;
  /** Bytes of results each caller scope kept in the current TTL window (KEPT_SHARE_PER_CALLER). */
  private readonly keptBytes = new LRUCache<string, { bytes: number; since: number }>({ max: 10_000 });
  private readonly keptBytesPerCaller: number;
  private readonly inFlight = new Map<string, InFlight>();
  /**
   * Invalidation bumps a scope's generation, which is part of every key: older entries (and GETs
   * still in flight when a withdrawal succeeded) become unreachable and age out. Bounded; a scope
   * forgotten here restarts at 0, by which time its old entries are far past their TTL.
   */
  private readonly generations = new LRUCache<string, number>({ max: 100_000 });
  private readonly staggerJoiners: () => boolean;
  private readonly observer: Pick<UpstreamObserver, 'cache'> | undefined;

  constructor(options: ResponseCacheOptions) {
    this.observer = options.observer;
    this.ttlMs = options.ttlMs;
    // The LRU's own clock by default (performance.now), so `until` and its TTLs agree.
    this.now = options.now ?? (() => performance.now());
    this.staggerJoiners = options.staggerJoiners ?? loopHasIdleTime();
    this.keptBytesPerCaller = options.maxBytes * KEPT_SHARE_PER_CALLER;
    this.entries =
      options.ttlMs > 0
        ? new LRUCache<string, CachedResponse | KeptEntry>({
            maxSize: options.maxBytes,
            // The text and its parsed objects: those take about 1.3 times the text (a page of
            // wallets, measured with --expose-gc), so an entry counts 2.5 times its text, plus its
            // key and a fixed overhead (entryBytes). A kept GraphQL result likewise.
            sizeCalculation: (entry, key) => entryBytes(entry.text, key),
            ttl: options.ttlMs,
            // A test clock must be read on every access, not memoised between timer ticks.
            ...(options.now && { perf: { now: options.now }, ttlResolution: 0 }),
          })
        : null;
  }

  /**
   * The response for GET `path` in a caller's scope (CallerScopes.scopeOf): from the cache, from
   * an identical call already in flight, or from `fetch` (whose 2xx answer is then cached when it
   * is a well-formed envelope). `served` counts the first two, for the request's access log.
   */
  async get(
    scope: string,
    path: string,
    fetch: () => Promise<UpstreamResponse>,
    served?: Served,
  ): Promise<UpstreamResponse> {
    const key = this.key(scope, path);
    const cached = this.entries?.get(key) as CachedResponse | undefined;
    if (cached) {
      if (served) {
        served.cached++;
        noteRead(served, key, cached.until, cached.serial);
      }
      this.observer?.cache('hit');
      return cached;
    }
    const pending = this.inFlight.get(key);
    if (pending) {
      if (served) served.coalesced++;
      this.observer?.cache('coalesced');
      pending.turn = pending.turn.then(() => (this.takesTurns(pending) ? nextTurn() : undefined));
      return pending.turn.then(() => {
        if (served) noteRead(served, key, pending.until, pending.serial);
        return pending.call;
      });
    }
    this.observer?.cache('miss');
    const call = fetch()
      .then((response) => {
        if (this.entries && response.status >= 200 && response.status < 300 && isOkEnvelope(response.json)) {
          const cached: CachedResponse = {
            status: response.status,
            text: response.text,
            json: deepFreeze(response.json),
            until: this.now() + this.ttlMs,
            serial: ++this.serial,
          };
          this.entries.set(key, cached);
          // An answer over the whole bound is not stored: results built from it are not kept.
          if (this.entries.has(key)) {
            entry.until = cached.until;
            entry.serial = cached.serial;
          }
        }
        return response;
      })
      .finally(() => this.inFlight.delete(key));
    const entry: InFlight = {
      call,
      until: Number.NEGATIVE_INFINITY,
      serial: 0,
      turn: Promise.resolve(),
      startedAt: performance.now(),
      settledAt: 0,
      took: 0,
      small: true,
    };
    // The first joiner's turn comes once the call has settled, either way.
    const settled = (response?: UpstreamResponse) => {
      entry.settledAt = performance.now();
      entry.took = entry.settledAt - entry.startedAt;
      entry.small = (response?.text.length ?? 0) <= TURNS_MAX_BYTES;
    };
    entry.turn = call.then(settled, () => settled());
    this.inFlight.set(key, entry);
    if (!served) return call;
    return call.then((response) => {
      noteRead(served, key, entry.until, entry.serial);
      return response;
    });
  }

  /**
   * A GraphQL result kept under `key` (built by query deduplication, starting with the caller's
   * versioned scope), or undefined. Only while it is within its time and every cached answer it
   * was built from is still the one in the cache: an answer evicted or replaced since (a refetch
   * after its TTL) ends it, since executing the query again would not read it any more.
   */
  keptResult<T>(key: string): KeptResult<T> | undefined {
    if (!this.entries) return undefined;
    const resultKey = `${key}\nresult`;
    const kept = this.entries.get(resultKey) as KeptEntry | undefined;
    if (!kept) return undefined;
    const { reads } = kept;
    for (let i = 0; i < reads.length; i += 2) {
      // A hit on the kept result is a hit on what it read: those stay as recently used as it is.
      const read = this.entries.get(reads[i] as string) as CachedResponse | undefined;
      if (read?.serial !== reads[i + 1]) {
        this.entries.delete(resultKey);
        return undefined;
      }
    }
    return kept as KeptResult<T>;
  }

  /**
   * Keeps a result that `served`'s request executed in the caller scope `scope`, until the first
   * of the cached answers it read leaves the cache (`served.cachedUntil`), under the same byte
   * bound as the answers. Not kept:
   * - with the TTL at 0, or when the request read an answer the cache does not keep (a 404, a
   *   `fresh` read);
   * - when it read no REST answer at all (`{ __typename }`): it costs nothing upstream to execute
   *   again, and any made-up key can send it; so every kept result has read a 2xx for its key;
   * - past the caller's share of the bound in the current TTL (KEPT_SHARE_PER_CALLER): the query
   *   then executes as usual.
   */
  keepResult(scope: string, key: string, kept: KeptResult, served: Served): boolean {
    if (!this.entries || !Number.isFinite(served.cachedUntil) || !served.reads) return false;
    const now = this.now();
    const ttl = Math.floor(Math.min(served.cachedUntil - now, this.ttlMs));
    if (!(ttl >= 1)) return false;
    const resultKey = `${key}\nresult`;
    const size = entryBytes(kept.text, resultKey);
    let share = this.keptBytes.get(scope);
    if (!share || now - share.since >= this.ttlMs) {
      // Every result kept in an earlier window has left by the end of this one: at most two
      // windows' shares are alive at any moment.
      share = { bytes: 0, since: now };
      this.keptBytes.set(scope, share);
    }
    if (share.bytes + size > this.keptBytesPerCaller) return false;
    share.bytes += size;
    this.entries.set(resultKey, { ...kept, reads: served.reads }, { ttl, size });
    return this.entries.has(resultKey);
  }

  /** Whether the next waiter of this call gets its own event-loop turn (see InFlight). */
  private takesTurns(entry: InFlight): boolean {
    return entry.small && performance.now() - entry.settledAt < entry.took && this.staggerJoiners();
  }

  /**
   * The scope plus its generation: two reads in the same versioned scope may share one answer
   * (same caller, and no invalidation between them).
   */
  versionedScope(scope: string): string {
    return `${scope}:${this.generations.get(scope) ?? 0}`;
  }

  /** Forgets everything cached for this caller, e.g. after it created a withdrawal. */
  invalidate(scope: string): void {
    this.generations.set(scope, (this.generations.get(scope) ?? 0) + 1);
  }

  /** Distinct GETs in flight that identical calls would join. */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  private key(scope: string, path: string): string {
    return `${this.versionedScope(scope)}:GET:${path}`;
  }
}
