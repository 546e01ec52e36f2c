import { Cluster, type Redis } from 'ioredis';
import { type Expiry, type LoopStalls, loopStalls, StallAwareTimer } from '../shared/loop-stalls.ts';

/**
 * Bounds on the gateway's Redis commands (REDIS_TIMEOUT_MS) on the loop's awake clock (LoopStalls),
 * not ioredis's plain timers, which a stalled loop fires before the answer in the socket is read
 * (docs/fleet.md). A command gets its bound of awake time and at most STALL_ALLOWANCE × it of wall
 * time: out of awake time is Redis's silence (RedisSilentError), out of wall time through a stall is
 * this process's delay (LoopStalledError). A connection silent for SOCKET_SILENCE × the bound while
 * commands wait is destroyed and made again.
 */

export const STALL_ALLOWANCE = 3;
const SOCKET_SILENCE = 3;

export class RedisSilentError extends Error {
  constructor(boundMs: number, waitedMs: number) {
    super(`Command timed out: redis did not answer within ${boundMs} ms (waited ${waitedMs} ms)`);
    this.name = 'RedisSilentError';
  }
}

/** A command not heard in time because this process's event loop stalled: evidence about this process. */
export class LoopStalledError extends Error {
  readonly stalledMs: number;
  constructor(waitedMs: number, stalledMs: number) {
    super(
      `Command not heard in time: this process's event loop was stalled ${stalledMs} of the ${waitedMs} ms waited`,
    );
    this.name = 'LoopStalledError';
    this.stalledMs = stalledMs;
  }
}

interface BoundableCommand {
  isSettled?: boolean;
  reject(error: Error): void;
  promise: Promise<unknown>;
}
interface NodeInternals {
  sendCommand(command: BoundableCommand, stream?: unknown): Promise<unknown>;
  setSocketTimeout(): void;
  socketTimeoutTimer: unknown;
  commandQueue: { length: number };
  stream: NodeJS.ReadableStream & { destroy(error?: Error): void };
  options: { socketTimeout?: number | undefined };
}

const bounds = new WeakMap<Redis | Cluster, number | null>();
/** Commands whose bound runs: one set for every node, as a MOVED sends a command to another. */
const armed = new WeakSet<BoundableCommand>();

/**
 * Bounds every command of `client` (and of each node of a Cluster) by `boundMs` of awake time;
 * `null`: no bound (a subscriber). The client must have been made without `commandTimeout`.
 */
export function boundCommands<T extends Redis | Cluster>(
  client: T,
  boundMs: number | null,
  stalls: LoopStalls = loopStalls(),
): T {
  bounds.set(client, boundMs);
  if (client instanceof Cluster) {
    client.on('+node', (node: Redis) => boundNode(node, boundMs, stalls));
    for (const node of client.nodes()) boundNode(node, boundMs, stalls);
  } else {
    boundNode(client as Redis, boundMs, stalls);
  }
  return client;
}

export function boundOf(client: Redis | Cluster): number | null {
  const bound = bounds.get(client);
  if (bound === undefined) throw new Error('a Redis client of the gateway is made by connectRedis');
  return bound;
}

function boundNode(node: Redis, boundMs: number | null, stalls: LoopStalls): void {
  const internals = node as unknown as NodeInternals;
  if (typeof internals.sendCommand !== 'function' || typeof internals.setSocketTimeout !== 'function') {
    throw new Error(
      'ioredis no longer has sendCommand/setSocketTimeout: src/redis/command-bounds.ts needs a look',
    );
  }
  if (boundMs !== null) {
    const send = internals.sendCommand.bind(node);
    internals.sendCommand = (command, stream) => {
      // A command is sent again after a MOVED or a reconnection: its bound runs from the first send.
      if (!armed.has(command) && !command.isSettled) {
        armed.add(command);
        const timer = new StallAwareTimer(stalls, boundMs, boundMs * STALL_ALLOWANCE, (expiry) => {
          if (!command.isSettled) command.reject(expiryError(boundMs, expiry));
        });
        command.promise.then(
          () => timer.cancel(),
          () => timer.cancel(),
        );
      }
      return send(command, stream);
    };
    // ioredis arms its socket timer only when the option is set; the bound below replaces its timer.
    internals.options.socketTimeout = boundMs * SOCKET_SILENCE;
  }
  internals.setSocketTimeout = function boundedSocketTimeout(this: NodeInternals) {
    const stream = this.stream;
    const silence = this.options.socketTimeout ?? 0;
    const timer = new StallAwareTimer(stalls, silence, silence * STALL_ALLOWANCE, (expiry) => {
      stream.off('close', onClose);
      stream.off('data', onData);
      if (this.stream !== stream || this.socketTimeoutTimer !== timer) return;
      this.socketTimeoutTimer = undefined;
      // Only silence destroys the connection: after a stall its answers are about to be read.
      if (expiry.kind === 'silent') {
        stream.destroy(
          new Error(`Socket timeout: no data from redis in ${silence} ms with commands waiting`),
        );
      } else if (this.commandQueue.length > 0) {
        this.setSocketTimeout();
      }
    });
    // ioredis clears its own timer on close with clearTimeout, which does not know this one.
    const onClose = () => timer.cancel();
    stream.once('close', onClose);
    this.socketTimeoutTimer = timer;
    // As ioredis's own: ends at the connection's next data, starts again while commands wait.
    const onData = () => {
      timer.cancel();
      stream.off('close', onClose);
      if (this.socketTimeoutTimer === timer) this.socketTimeoutTimer = undefined;
      if (this.commandQueue.length > 0 && this.socketTimeoutTimer === undefined) this.setSocketTimeout();
    };
    stream.once('data', onData);
  };
}

function expiryError(boundMs: number, expiry: Expiry): Error {
  return expiry.kind === 'silent'
    ? new RedisSilentError(boundMs, expiry.waitedMs)
    : new LoopStalledError(expiry.waitedMs, expiry.stalledMs);
}
