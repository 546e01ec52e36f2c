import type { WebSocket } from 'ws';

/** An acknowledged socket: its key's scope, when an operation last ran on it, its ws socket. */
export interface AcknowledgedSocket {
  scope: string;
  busyAt: number;
  ws: WebSocket;
}

/**
 * The slots of sockets of keys not accepted lately, all keys together; a socket whose key was
 * accepted since is let out (an ordinary socket then). Its work is bounded by its size.
 */
export class UnprovenAllowance {
  private readonly held = new Set<AcknowledgedSocket>();
  private readonly size: number;
  readonly isKnownGood: (scope: string) => boolean;

  constructor(size: number, isKnownGood: (scope: string) => boolean) {
    this.size = size;
    this.isKnownGood = isKnownGood;
  }

  /** Whether no slot is left, once the sockets whose key was accepted since have left. */
  isFull(): boolean {
    if (this.held.size < this.size) return false;
    this.release();
    return this.held.size >= this.size;
  }

  take(socket: AcknowledgedSocket): void {
    this.held.add(socket);
  }

  /** A socket closed: its slot, if it held one, is free. */
  leave(socket: AcknowledgedSocket): void {
    this.held.delete(socket);
  }

  /** The socket that has held its slot longest, once those whose key was accepted since have left. */
  oldest(): AcknowledgedSocket | undefined {
    this.release();
    const [oldest] = this.held;
    return oldest;
  }

  /** Lets out the sockets whose key was accepted since. */
  release(): void {
    for (const socket of this.held) if (this.isKnownGood(socket.scope)) this.held.delete(socket);
  }
}
