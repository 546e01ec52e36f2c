import type { Logger } from 'pino';
import { GatewayError } from '../errors/errors.ts';
import type { IndexChunkStore } from '../redis/wallet-index-chunks.ts';
import type { Callers } from '../upstream/callers.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';
import type { Page } from '../upstream/types.ts';
import { agedPage, INDEX_CHUNK, type IndexedList, type ListItem, WalletIndexes } from './wallet-index.ts';

/**
 * Builds and catches up merchants' wallet indexes in the background, never in a request: a job
 * extends one list's index from the oldest end, a page per step (buildPage), steps spaced at
 * `callsPerSecond`, at most BUILDS_AT_ONCE jobs at once taking turns with a bounded queue. It calls
 * with the key of the latest request that asked, through the merchant's own transport (fair share,
 * circuit), and ends at the list's total, at a 401 or 403, or after FAILURES_MAX failed steps in a
 * row. docs/wallet-index.md#building-it-in-the-background-at-a-bounded-rate.
 */

export const BUILDS_AT_ONCE = 2;
/** Jobs queued, at most; past it a request's ask is dropped (the next request asks again). */
const QUEUE_MAX = 1_000;
/** Steps a job takes before it lets a waiting one run: a short build starts within a few calls. */
const STEPS_PER_TURN = 5;
const FAILURES_MAX = 3;
/** How often a request waiting for a build looks whether it is done. */
const SETTLED_POLL_MS = 25;
/** Positions left for items that arrive between two steps beyond those the last step saw. */
const MARGIN = 5;

/**
 * The page a build step reads: it must hold the first age not indexed, between positions `from`
 * (nothing arrived) and `to` (as many arrived as may), and starts as far before `from` as it may.
 */
export function buildPage(from: number, to: number): { page: number; size: number } {
  let best = { page: Math.floor(from / 1000) + 1, size: 1000 };
  let gain = from % 1000;
  for (let size = 1000; size >= 250; size--) {
    const start = Math.floor(to / size) * size;
    if (start > from || from - start <= gain) continue;
    gain = from - start;
    best = { page: start / size + 1, size };
  }
  return best;
}

export type ReadPage = (
  authorization: string,
  list: IndexedList,
  request: { page: number; size: number },
) => Promise<Page<ListItem>>;

interface Job {
  key: string;
  scope: string;
  list: IndexedList;
  authorization: string;
  total: number;
  /** Over all its turns. */
  steps: number;
  /** The fleet copy's generation when the job began: it saves under that one only (none: saves nothing). */
  generation?: number | undefined;
  /** Whole chunks below this are in the fleet's copy (loaded from it, or saved). */
  saved: number;
}

export class IndexBuilds {
  private readonly indexes: WalletIndexes;
  private readonly read: ReadPage;
  private readonly intervalMs: number;
  private readonly logger: Logger | undefined;
  private readonly chunks: IndexChunkStore | undefined;
  private readonly waiting = new Map<string, Job>();
  private readonly running = new Map<string, Job>();
  private closed = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  /** REST calls made by jobs (tests, metrics). */
  calls = 0;

  constructor(options: {
    indexes: WalletIndexes;
    read: ReadPage;
    callsPerSecond: number;
    logger?: Logger;
    /** The fleet's copy (Redis): a job starts from what it holds and adds what it builds. */
    chunks?: IndexChunkStore;
  }) {
    this.chunks = options.chunks;
    this.indexes = options.indexes;
    this.read = options.read;
    this.intervalMs = 1000 / options.callsPerSecond;
    this.logger = options.logger;
  }

  /** Asks that the list's index reach `total` items; a no-op when a job for it exists already. */
  request(scope: string, list: IndexedList, authorization: string, total: number): void {
    if (this.closed || !this.indexes.enabled) return;
    const key = `${scope}|${list}`;
    const known = this.running.get(key) ?? this.waiting.get(key);
    if (known) {
      known.total = Math.max(known.total, total);
      // The newest asker's key: still in use, where the first asker's may have been revoked since.
      known.authorization = authorization;
      return;
    }
    if (this.waiting.size >= QUEUE_MAX) return;
    this.waiting.set(key, { key, scope, list, authorization, total, steps: 0, saved: 0 });
    this.startNext();
  }

  /** The list's index contradicted the REST API: forgotten here and in the fleet's copy, and built again. */
  contradicted(scope: string, list: IndexedList, authorization: string, total: number): void {
    this.indexes.forget(scope, list);
    void this.chunks?.drop(scope, list);
    this.request(scope, list, authorization, total);
  }

  /** Whether a job for the list is queued or running. */
  pending(scope: string, list: IndexedList): boolean {
    const key = `${scope}|${list}`;
    return this.running.has(key) || this.waiting.has(key);
  }

  /** About how long until the list's job is done, in ms: its steps at its pace, shared with other jobs. */
  eta(scope: string, list: IndexedList): number | undefined {
    const key = `${scope}|${list}`;
    const job = this.running.get(key) ?? this.waiting.get(key);
    if (!job) return undefined;
    const covered = this.indexes.of(scope, list)?.covered ?? 0;
    const steps = Math.ceil(Math.max(0, job.total - covered) / 1000) + 1;
    const sharing = Math.max(1, (this.running.size + this.waiting.size) / BUILDS_AT_ONCE);
    return steps * this.intervalMs * sharing;
  }

  /** Resolves once the list's job has ended (done, given up, closed), or after `withinMs`. */
  async settled(scope: string, list: IndexedList, withinMs: number): Promise<void> {
    const until = Date.now() + withinMs;
    while (!this.closed && this.pending(scope, list) && Date.now() < until) {
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(SETTLED_POLL_MS, until - Date.now())).unref(),
      );
    }
  }

  /** Resolves once no job is queued or running (tests, benchmarks). */
  async idle(): Promise<void> {
    while (!this.closed && (this.running.size > 0 || this.waiting.size > 0)) await this.sleep(10);
  }

  close(): void {
    this.closed = true;
    this.waiting.clear();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private startNext(): void {
    while (!this.closed && this.running.size < BUILDS_AT_ONCE && this.waiting.size > 0) {
      const job = this.waiting.values().next().value as Job;
      this.waiting.delete(job.key);
      this.running.set(job.key, job);
      void this.run(job).finally(() => {
        this.running.delete(job.key);
        this.startNext();
      });
    }
  }

  private async run(job: Job): Promise<void> {
    let failures = 0;
    /** Items that arrived between the last two steps: the next step expects as many. */
    let arriving = 0;
    const start = this.indexes.of(job.scope, job.list);
    if (job.steps === 0 && this.chunks && start && !start.discarded && start.covered % INDEX_CHUNK === 0) {
      const first = start.covered / INDEX_CHUNK;
      // No more than a list may hold: a quarter of the bound, at up to 20 bytes an age.
      const most = Math.floor(this.indexes.maxBytes / 4 / (INDEX_CHUNK * 20));
      const loaded = await this.chunks.load(job.scope, job.list, first, most);
      job.generation = loaded.generation;
      for (const [i, chunk] of loaded.chunks.entries()) {
        if (!start.addChunk(first + i, chunk)) break;
        this.indexes.resize(start);
        if (start.discarded) break;
      }
      job.saved = Math.floor(start.covered / INDEX_CHUNK);
    }
    while (!this.closed) {
      // Turns, so two long builds do not hold every other merchant's for minutes.
      if (++job.steps % STEPS_PER_TURN === 0 && this.waiting.size > 0) {
        this.waiting.set(job.key, job);
        return;
      }
      const index = this.indexes.of(job.scope, job.list);
      if (!index || index.discarded || index.covered >= job.total) return;
      // Where the first age not indexed is now: at least here, further by what arrives meanwhile.
      const position = Math.max(0, job.total - 1 - index.covered);
      const request = buildPage(position, position + 2 * arriving + MARGIN);
      try {
        this.calls++;
        const page = agedPage(
          await this.read(job.authorization, job.list, request),
          (request.page - 1) * request.size,
        );
        failures = 0;
        arriving = Math.max(0, page.total - job.total);
        const ok = index.absorb(page);
        this.indexes.resize(index);
        if (!ok) {
          this.logger?.info({ list: job.list, reason: index.discarded }, 'wallet index discarded');
          if (index.discarded === 'moved') {
            this.indexes.forget(job.scope, job.list);
            void this.chunks?.drop(job.scope, job.list);
          }
          return;
        }
        job.total = Math.max(page.total, index.covered);
        for (
          ;
          this.chunks && job.generation !== undefined && (job.saved + 1) * INDEX_CHUNK <= index.covered;
          job.saved++
        ) {
          const chunk = index.chunk(job.saved);
          if (chunk) await this.chunks.save(job.scope, job.list, job.generation, job.saved, chunk);
        }
      } catch (error) {
        const code = error instanceof GatewayError ? error.code : undefined;
        if (code === 'UNAUTHENTICATED' || code === 'FORBIDDEN' || ++failures >= FAILURES_MAX) return;
      }
      await this.sleep(this.intervalMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      timer.unref();
      this.timers.add(timer);
    });
  }
}

export interface WalletIndexing {
  indexes: WalletIndexes;
  builds: IndexBuilds;
}

/** The process's wallet indexes and their builds; undefined when WALLET_INDEX_MAX_BYTES is 0. */
export function createWalletIndexing(
  client: MerchantWalletClient,
  options: {
    maxBytes: number;
    callsPerSecond: number;
    /** One call each, within the request deadline. */
    callers: Pick<Callers, 'forOneCall'>;
    logger?: Logger;
    chunks?: IndexChunkStore | undefined;
  },
): WalletIndexing | undefined {
  if (options.maxBytes <= 0) return undefined;
  const indexes = new WalletIndexes(options.maxBytes);
  const read: ReadPage = (authorization, list, request) => {
    const caller = options.callers.forOneCall(authorization);
    // Fresh: pages of 1000, read once, would only push the screens' answers out of the micro-cache.
    return list === 'deposits'
      ? client.listDeposits(caller, request, { fresh: true })
      : client.listWithdrawalIntents(caller, request, { fresh: true });
  };
  const builds = new IndexBuilds({
    indexes,
    read,
    callsPerSecond: options.callsPerSecond,
    ...(options.logger && { logger: options.logger }),
    ...(options.chunks && { chunks: options.chunks }),
  });
  return { indexes, builds };
}
