import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';
import type { UpstreamResponse } from './call.ts';
import { isOkEnvelope } from './envelope.ts';
import type { UpstreamObserver } from './telemetry.ts';
import { deepFreeze } from './wire.ts';

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
  /** Set when query deduplication answered the request with another's result instead of executing it. */
  sharedResult?: 'in_flight' | 'kept';
}

/** A cached 2xx answer, and when it leaves the cache. */
interface CachedResponse extends UpstreamResponse {
  until: number;
}

/** A GraphQL result kept by query deduplication (keepResult), with its serialised text. */
export interface KeptResult<T = unknown> {
  result: T;
  text: string;
}

export class ResponseCache {
  /**
   * Answers kept parsed: every hit hands out the same objects, as coalescing hands one answer to
   * every joiner, without a `JSON.parse` per hit (that parse made the defaults slower than no
   * cache at all: 12 % of a cached dashboard's CPU). They are frozen from the moment they are
   * parsed (wire.ts), so no request can change another's answer.
   */
  private readonly entries: LRUCache<string, CachedResponse | KeptResult> | null;
  private readonly ttlMs: number;
  private readonly now: () => number;
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
    this.entries =
      options.ttlMs > 0
        ? new LRUCache<string, CachedResponse | KeptResult>({
            maxSize: options.maxBytes,
            // The text and its parsed objects: those take about 1.3 times the text (a page of
            // wallets, measured with --expose-gc), so an entry counts 2.5 times its text. A kept
            // GraphQL result likewise: its text and its objects.
            sizeCalculation: (entry) => Math.max(1, Math.ceil(entry.text.length * ENTRY_BYTES_PER_CHAR)),
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
        served.cachedUntil = Math.min(served.cachedUntil, cached.until);
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
        if (served) served.cachedUntil = Math.min(served.cachedUntil, pending.until);
        return pending.call;
      });
    }
    this.observer?.cache('miss');
    const call = fetch()
      .then((response) => {
        if (this.entries && response.status >= 200 && response.status < 300 && isOkEnvelope(response.json)) {
          entry.until = this.now() + this.ttlMs;
          this.entries.set(key, {
            status: response.status,
            text: response.text,
            json: deepFreeze(response.json),
            until: entry.until,
          });
        }
        return response;
      })
      .finally(() => this.inFlight.delete(key));
    const entry: InFlight = {
      call,
      until: Number.NEGATIVE_INFINITY,
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
      served.cachedUntil = Math.min(served.cachedUntil, entry.until);
      return response;
    });
  }

  /**
   * A GraphQL result kept under `key` (built by query deduplication, starting with the caller's
   * versioned scope) and not yet past `until`, or undefined.
   */
  keptResult<T>(key: string): KeptResult<T> | undefined {
    return this.entries?.get(`${key}\nresult`) as KeptResult<T> | undefined;
  }

  /**
   * Keeps a result until `until` (the `cachedUntil` of the request that executed it): as long as
   * every REST answer it was built from is still in this cache. Kept with the cached answers,
   * under the same byte bound; nothing is kept with the TTL at 0.
   *
   * A result that read no REST answer at all (`{ __typename }`) is not kept: it costs nothing
   * upstream to execute again, and any made-up key can send it. Every kept result has read a 2xx
   * for its key, so only keys the REST API accepts take room from the cached answers.
   */
  keepResult(key: string, kept: KeptResult, until: number): void {
    if (!this.entries || !Number.isFinite(until)) return;
    const ttl = Math.floor(Math.min(until - this.now(), this.ttlMs));
    if (!(ttl >= 1)) return;
    this.entries.set(`${key}\nresult`, kept, { ttl });
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
