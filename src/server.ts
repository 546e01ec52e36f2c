import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { EdgeLimits } from './config/config.ts';
import type { CallerScopes } from './upstream/caller-scope.ts';
import type { Callers } from './upstream/callers.ts';
import { type KeyEvidenceSource, serveGraphQLOverWebSocket } from './websocket/websocket.ts';
import type { Gateway } from './yoga.ts';

/**
 * How the edge bounds what a client can hold (HEADERS_TIMEOUT_MS and the rest, see config.ts).
 * A connection that sends nothing, or part of a request, is closed once its time is up; one that
 * waits between requests, after the keep-alive timeout. Past the connection cap the longest-waiting
 * connection makes room, so the process keeps file descriptors for the REST API and Redis and an
 * idle flood cannot lock real clients out.
 */

export interface RunningServer {
  server: Server;
  url: string;
  /**
   * From now on every answer asks its client to close the connection (`Connection: close`), so
   * keep-alive clients, a layer-4 load balancer's included, open a new one, which lands on another
   * replica once this one is out of the load balancer. Requests are served as before.
   */
  closeConnectionsAfterAnswer(): void;
  /**
   * Stops accepting connections and upgrades, closes the WebSockets (1012 Service Restart) and lets in-flight
   * requests finish, each answer closing its connection, within `timeoutMs` from the call: then
   * every connection still open is cut, whatever it is (a request, a WebSocket whose client never
   * finished the close handshake, an upgrade). Resolves once none is left. Later calls return the
   * first call's promise.
   */
  close(timeoutMs: number): Promise<void>;
}

/**
 * Starts `server` on `host:port` (0: a free port) and answers its base URL; a wildcard or
 * loopback host is named `localhost`. Rejects when the port cannot be had.
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
 * Bounds what connections may hold, beyond Node's own timeouts (see `listen`), and returns the
 * function that stops the watch.
 *
 * Keeps at most `maxConnections` open. Past it, the connection that has waited longest without a
 * request under way (one that sent nothing, part of its headers, or sits idle between requests) is
 * closed to make room, else the one whose client has not read the longest: a flood of idle or
 * non-reading connections then churns through its own slots instead of locking real clients out
 * until a timeout reaps it. Only when every connection is busy (a request under way and read, a
 * WebSocket) is the new one closed at once.
 *
 * Closes a connection whose client stopped reading: bytes wait to be sent and none has left for
 * `sendTimeoutMs`. Node's timeouts bound receiving a request only, so without this a client that
 * asks for a large answer (the 9 MB GraphiQL page) and never reads it would hold its slot and the
 * answer's memory for as long as it likes. An SSE stream that merely has no news is not stalled:
 * nothing waits to be sent.
 */
function boundConnections(
  server: Server,
  edge: EdgeLimits,
  logger: Logger,
): {
  /** Stops the sweep for stalled connections. */
  stop(): void;
  /**
   * Closes every connection still open, upgraded ones included: the HTTP server's own
   * closeAllConnections knows only those it still parses, and an upgraded socket would hold
   * `server.close()` open for good. Answers how many it closed.
   */
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

/**
 * Serves the gateway over HTTP/1.1, and GraphQL over WebSocket (graphql-ws) on its GraphQL path.
 * Port 0 picks a free port. What close does: RunningServer.close.
 */
export async function listen(
  gateway: Gateway,
  options: {
    port: number;
    host: string;
    logger: Logger;
    maxRequestBytes: number;
    edge: EdgeLimits;
    /** Callers' scopes, the runtime's: WebSockets are counted per scope. */
    scopes: Pick<CallerScopes, 'scopeOf'>;
    /** Which keys the REST API accepted lately, and a key proof's Caller: WebSocket admission by evidence. */
    keys?: { evidence: KeyEvidenceSource; callers: Pick<Callers, 'forOneCall'> };
  },
) {
  const { edge } = options;
  let closeAfterAnswer = false;
  let closing: Promise<void> | undefined;
  const server = createServer(
    {
      headersTimeout: edge.headersTimeoutMs,
      requestTimeout: edge.requestTimeoutMs,
      keepAliveTimeout: edge.keepAliveTimeoutMs,
      // Node checks the two timeouts above every this often (30 s by default): a connection is
      // closed at most a second after its time is up.
      connectionsCheckingInterval: Math.min(1_000, edge.headersTimeoutMs),
    },
    (request, response) => {
      // Node ends the connection once an answer with this header is sent.
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
  // The one listener for upgrades, there for the server's whole life: Node hands an upgrade
  // request's socket to its 'upgrade' listeners, and one that nobody answers is open for good
  // (the HTTP server no longer tracks it, so only closing it ends server.close()).
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
