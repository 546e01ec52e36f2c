import { ReplyError } from 'ioredis';
import type { Logger } from 'pino';
import { LoopStalledError } from './command-bounds.ts';
import { mastersOf, type RedisClient, refreshSlots } from './connection.ts';

/**
 * LoopStalledErrors in a row, of background PINGs and requests' commands alike, since a PING was
 * last answered, past which Redis is taken for silent.
 */
const STALLED_PINGS = 3;

/**
 * Whether the fleet's Redis answers, known without asking it on a request's path: the first command
 * left unanswered (a timeout, a closed connection) or failed background PING marks it unresponsive,
 * and `run` then refuses at once, so each request takes its degraded path (docs/fleet.md); the first
 * PING every master answers marks it responsive. An answered refusal (a script error, OOM) does not
 * count, nor does a LoopStalledError, except STALLED_PINGS in a row.
 */

export class RedisHealth {
  private unresponsiveSince: number | null = null;
  private checking = false;
  private stallLoggedAt = 0;
  private stalledPings = 0;
  private readonly client: RedisClient;
  private readonly logger: Logger;
  private readonly everyMs: number;

  constructor(client: RedisClient, logger: Logger, everyMs = 1_000) {
    this.client = client;
    this.logger = logger;
    this.everyMs = everyMs;
  }

  /** False from the first unanswered command until every master answers a PING again. */
  get responsive(): boolean {
    return this.unresponsiveSince === null;
  }

  /** An unanswered command marks Redis unresponsive; an answered refusal or a stall does not. */
  report(error: unknown): void {
    if (error instanceof ReplyError) return;
    if (error instanceof LoopStalledError) {
      // Once per second at most: a stall leaves every command in flight unheard at once.
      if (Date.now() - this.stallLoggedAt < 1_000) return;
      this.stallLoggedAt = Date.now();
      this.logger.warn(
        { err: error.message, stalledMs: error.stalledMs },
        "a redis command went unheard while this process's event loop was stalled; redis is not taken for silent",
      );
      return;
    }
    this.markUnresponsive(error, 'redis does not answer');
  }

  private markUnresponsive(error: unknown, why: string): void {
    if (this.unresponsiveSince !== null) return;
    this.unresponsiveSince = Date.now();
    this.logger.warn(
      { err: (error as Error)?.message },
      `${why}; withdrawals are refused unsent and rate limits are per process until it answers`,
    );
  }

  /** PINGs every master once; true when all answered. */
  async check(): Promise<boolean> {
    if (this.checking) return this.responsive;
    this.checking = true;
    try {
      const masters = mastersOf(this.client);
      if (masters.length === 0) throw new Error('no redis master is known');
      await Promise.all(masters.map((master) => master.ping()));
      this.stalledPings = 0;
      if (this.unresponsiveSince !== null) {
        this.logger.info({ unresponsiveMs: Date.now() - this.unresponsiveSince }, 'redis answers again');
        this.unresponsiveSince = null;
      }
      return true;
    } catch (error) {
      // A loop stalled PING after PING is past telling whose silence it is: the safe side.
      if (error instanceof LoopStalledError && ++this.stalledPings >= STALLED_PINGS) {
        this.markUnresponsive(error, 'redis unheard through repeated event-loop stalls');
      } else {
        this.report(error);
      }
      // A Cluster may have promoted a replica of the master that does not answer.
      refreshSlots(this.client);
      return false;
    } finally {
      this.checking = false;
    }
  }

  /** Returns a stop function. */
  start(): () => void {
    const timer = setInterval(() => void this.check(), this.everyMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** One command of a request: RedisUnresponsiveError at once while Redis is unresponsive; failures noted. */
  async run<T>(command: () => Promise<T>): Promise<T> {
    if (this.unresponsiveSince !== null) throw new RedisUnresponsiveError();
    try {
      return await command();
    } catch (error) {
      // Counts toward STALLED_PINGS as check's PINGs do.
      if (error instanceof LoopStalledError && ++this.stalledPings >= STALLED_PINGS) {
        this.markUnresponsive(error, 'redis unheard through repeated event-loop stalls');
      } else {
        this.report(error);
      }
      throw error;
    }
  }
}

export class RedisUnresponsiveError extends Error {
  constructor() {
    super('redis does not answer');
    this.name = 'RedisUnresponsiveError';
  }
}
