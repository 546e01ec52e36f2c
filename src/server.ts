import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { EdgeLimits } from './config/config.ts';
import type { CallerScopes } from './upstream/caller-scope.ts';
import type { Callers } from './upstream/callers.ts';
import { type KeyEvidenceSource, serveGraphQLOverWebSocket } from './websocket/websocket.ts';
import type { Gateway } from './yoga.ts';

export interface RunningServer {
  server: Server;
  url: string;
  /** From now on every answer carries `Connection: close`, so clients reconnect (elsewhere). */
  closeConnectionsAfterAnswer(): void;
  /**
   * Stops accepting connections and upgrades, closes the WebSockets (1012) and lets in-flight
   * requests finish within `timeoutMs`, then cuts every connection still open. Resolves once none
   * is left; later calls return the first call's promise.
   */
  close(timeoutMs: number): Promise<void>;
}

/**
 * Starts `server` on `host:port` (0: a free port) and answers its base URL (a wildcard or loopback
 * host named `localhost`); rejects when the port cannot be had.
 */
export async function listenOn(server: Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const name = ['0.0.0.0', '::', '127.0.0.1', '::1'].includes(host) ? 'localhost' : host;
  return `http://${name.includes(':') ? `[${name}]` : name}:${address.port}`;
}

/**
 * Bounds what connections may hold beyond Node's timeouts (docs/production.md, Limits and browser
 * safety): past `maxConnections`, the connection waiting longest without a request under way makes
 * room, else the one whose client has not read the longest, else the new one is closed; and a
 * connection whose bytes have waited `sendTimeoutMs` without any leaving is closed.
 */
function boundConnections(
  server: Server,
  edge: EdgeLimits,
  logger: Logger,
): {
  /** Stops the sweep for stalled connections. */
  stop(): void;
  /** Closes every connection still open, upgraded ones (unknown to Node's own) included; answers how many. */
  closeAll(): number;
} {
  const max = edge.maxConnections;
  /** Every connection still counted: closed ones leave at once, not when their close lands. */
  const open = new Set<Socket>();
  /** Those with no request under way, longest waiting first (a Set keeps insertion order). */
  const waiting = new Set<Socket>();
  const busy = (socket: Socket) => waiting.delete(socket);
  /** Those whose client has not read for a sweep or more, longest stalled first. */
  const stalled = new Set<Socket>();
  const close = (socket: Socket) => {
    open.delete(socket);
    waiting.delete(socket);
    stalled.delete(socket);
    socket.destroy();
  };
  let closedAtCap = 0;
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      waiting.delete(socket);
      stalled.delete(socket);
    });
    if (open.size > max) {
      const [longestWaiting] = waiting;
      const [longestStalled] = stalled;
      const making = longestWaiting ?? longestStalled;
      close(making ?? socket);
      // Logged once per thousand: a flood must not flood the log too.
      if (closedAtCap++ % 1_000 === 0) {
        logger.warn(
          {
            maxConnections: max,
            closed: closedAtCap,
            which: longestWaiting ? 'longest waiting' : longestStalled ? 'longest stalled' : 'new',
          },
          'connection cap reached: closing a connection (MAX_CONNECTIONS)',
        );
      }
      if (!making) return;
    }
    waiting.add(socket);
  });
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    busy(socket);
    // Back to waiting once answered, at the end of the line (keep-alive).
    response.once('finish', () => {
      if (!socket.destroyed) waiting.add(socket);
    });
  });
  server.on('upgrade', (request: IncomingMessage) => busy(request.socket));
  /** Per socket with bytes waiting: how many had left the process, and since when no more has. */
  const sent = new WeakMap<Socket, { bytes: number; since: number }>();
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const socket of open) {
        if (socket.writableLength === 0) {
          sent.delete(socket);
          stalled.delete(socket);
          continue;
        }
        // bytesWritten counts what is still buffered too; what has left is the difference.
        const bytes = socket.bytesWritten - socket.writableLength;
        const last = sent.get(socket);
        if (!last || last.bytes !== bytes) {
          sent.set(socket, { bytes, since: now });
          stalled.delete(socket);
        } else if (now - last.since >= edge.sendTimeoutMs) close(socket);
        else stalled.add(socket);
      }
    },
    Math.min(1_000, edge.sendTimeoutMs),
  );
  sweep.unref();
  return {
    stop: () => clearInterval(sweep),
    closeAll: () => {
      const left = [...open];
      for (const socket of left) close(socket);
      return left.length;
    },
  };
}

export interface ListenOptions {
  port: number;
  host: string;
  logger: Logger;
  maxRequestBytes: number;
  edge: EdgeLimits;
  /** Callers' scopes, the runtime's: WebSockets are counted per scope. */
  scopes: Pick<CallerScopes, 'scopeOf'>;
  /** Which keys the REST API accepted lately, and a key proof's Caller (WebSocket admission). */
  keys?: { evidence: KeyEvidenceSource; callers: Pick<Callers, 'forOneCall'> };
}

/** Serves the gateway over HTTP/1.1, and GraphQL over WebSocket (graphql-ws) on its GraphQL path. */
export async function listen(gateway: Gateway, options: ListenOptions) {
  const { edge } = options;
  let closeAfterAnswer = false;
  let closing: Promise<void> | undefined;
  const server = createServer(
    {
      headersTimeout: edge.headersTimeoutMs,
      requestTimeout: edge.requestTimeoutMs,
      keepAliveTimeout: edge.keepAliveTimeoutMs,
      // Node checks the timeouts above this often (30 s by default): closed within a second.
      connectionsCheckingInterval: Math.min(1_000, edge.headersTimeoutMs),
    },
    (request, response) => {
      if (closeAfterAnswer) response.setHeader('connection', 'close');
      return gateway.serveNode(request, response);
    },
  );
  const connections = boundConnections(server, edge, options.logger);
  const url = await listenOn(server, options.port, options.host).catch((error: unknown) => {
    connections.stop();
    throw error;
  });
  const websocket = serveGraphQLOverWebSocket(gateway, {
    path: gateway.graphqlEndpoint,
    maxPayload: options.maxRequestBytes,
    logger: options.logger,
    max: edge.maxWebSockets,
    perKey: edge.webSocketsPerKey,
    ...(edge.webSocketsUnproven !== undefined && { unproven: edge.webSocketsUnproven }),
    idleMs: edge.webSocketIdleMs,
    scopes: options.scopes,
    ...(options.keys && { keys: options.keys }),
  });
  // The one listener for upgrades, for the server's whole life: an upgrade nobody answers stays open.
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (closing) refuseUpgrade(socket);
    else websocket.handleUpgrade(request, socket, head);
  });
  /** The drain's steps, in order; `timeoutMs` counts from the first. */
  const drain = async (timeoutMs: number) => {
    connections.stop();
    closeAfterAnswer = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    const deadline = setTimeout(() => {
      server.closeAllConnections();
      const closed = connections.closeAll();
      options.logger.warn(
        { connections: closed },
        'shutdown timeout reached: closed the remaining connections',
      );
    }, timeoutMs);
    deadline.unref();
    // Idle keep-alive sockets would hold close() open; busy ones finish their request first,
    // and are closed as soon as they go idle (not KEEP_ALIVE_TIMEOUT_MS later).
    const reaper = setInterval(() => server.closeIdleConnections(), 50);
    reaper.unref();
    try {
      await Promise.all([websocket.close(), closed]);
    } finally {
      clearTimeout(deadline);
      clearInterval(reaper);
    }
  };
  const running: RunningServer = {
    server,
    url,
    closeConnectionsAfterAnswer: () => {
      closeAfterAnswer = true;
    },
    close: (timeoutMs) => {
      closing ??= drain(timeoutMs);
      return closing;
    },
  };
  return running;
}

/** An upgrade that arrives once the server closes: answered 503, its connection closed. */
function refuseUpgrade(socket: Duplex): void {
  socket.once('finish', () => socket.destroy());
  socket.end(
    'HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\nretry-after: 1\r\ncontent-length: 0\r\n\r\n',
  );
}
