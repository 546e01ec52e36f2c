import { ReplyError } from 'ioredis';
import type { Logger } from 'pino';
import { LoopStalledError } from './command-bounds.ts';
import { mastersOf, type RedisClient, refreshSlots } from './connection.ts';

/**
 * Whether the fleet's Redis answers, known without asking it on a request's path. A Redis that
 * refuses connections fails every command at once; a Redis that hangs (SIGSTOP, a long fork, a
 * partition) keeps its connections open and answers nothing, and each command then waits its
 * full bound (REDIS_TIMEOUT_MS). So:
 *
 * - any command of the gateway that goes unanswered (a timeout, a closed connection) marks Redis
 *   unresponsive at once (`report`), and so does a failed background PING (every `everyMs`, to
 *   every master);
 * - while Redis is unresponsive, the request paths that need it take their degraded path without
 *   waiting: withdrawals are refused unsent, rate limits are counted in this process, poll leases
 *   are not held, and the cross-replica notice of a withdrawal is not waited for;
 * - the first PING that every master answers makes it responsive again.
 *
 * A refusal that Redis did answer (a script error, OOM under `noeviction`) says Redis is up, and
 * does not count. Nor does a command unheard because this process's own event loop was stalled
 * (LoopStalledError, command-bounds.ts): that is logged as the process's delay, not Redis's silence.
 */
/** Background PINGs in a row unheard through loop stalls, past which Redis is taken for silent. */
const STALLED_PINGS = 3;

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

  /** Tells the health what a Redis command failed with; an unanswered one marks Redis unresponsive. */
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

  /** PINGs every master once (each bounded as every command is: command-bounds.ts); true when all answered. */
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
      // A loop stalled past every command's allowance, PING after PING, is past telling whose
      // silence it is: after STALLED_PINGS background PINGs in a row so ended, Redis is taken for
      // silent (the safe side: withdrawals are refused unsent at once, instead of each waiting).
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

  /** Starts the background PING; returns a stop function. */
  start(): () => void {
    const timer = setInterval(() => void this.check(), this.everyMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /**
   * Runs one Redis command for a request: refused at once (RedisUnresponsiveError) while Redis is
   * unresponsive, and a failure is reported.
   */
  async run<T>(command: () => Promise<T>): Promise<T> {
    if (this.unresponsiveSince !== null) throw new RedisUnresponsiveError();
    try {
      return await command();
    } catch (error) {
      // A loop stalled past every command's allowance, PING after PING, is past telling whose
      // silence it is: after STALLED_PINGS background PINGs in a row so ended, Redis is taken for
      // silent (the safe side: withdrawals are refused unsent at once, instead of each waiting).
      if (error instanceof LoopStalledError && ++this.stalledPings >= STALLED_PINGS) {
        this.markUnresponsive(error, 'redis unheard through repeated event-loop stalls');
      } else {
        this.report(error);
      }
      throw error;
    }
  }
}

/** Thrown instead of sending a command to a Redis known not to answer. */
export class RedisUnresponsiveError extends Error {
  constructor() {
    super('redis does not answer');
    this.name = 'RedisUnresponsiveError';
  }
}
