import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import { serveGraphQLOverWebSocket } from './websocket.ts';
import type { Gateway } from './yoga.ts';

/**
 * How the edge bounds what a client can hold (HEADERS_TIMEOUT_MS and the rest, see config.ts).
 * A connection that sends nothing, or part of a request, is closed once its time is up; one that
 * waits between requests, after the keep-alive timeout. Past the connection cap the longest-waiting
 * connection makes room, so the process keeps file descriptors for the REST API and Redis and an
 * idle flood cannot lock real clients out.
 */
export interface EdgeLimits {
  /** From a connection's opening (or its previous response) to its request's last header. */
  headersTimeoutMs: number;
  /** From a request's first byte to its body's last; a response may then stream for longer. */
  requestTimeoutMs: number;
  /** How long a connection may wait idle between requests. */
  keepAliveTimeoutMs: number;
  /** Open connections of this process, WebSockets included (see capConnections). */
  maxConnections: number;
  /** WebSockets of this process; past it an upgrade is answered 503. */
  maxWebSockets: number;
  /** Acknowledged WebSockets of one API key in this process; past it connection_init is refused. */
  webSocketsPerKey: number;
  /** A WebSocket with no operation under way for this long is closed. */
  webSocketIdleMs: number;
}

export interface RunningServer {
  server: Server;
  url: string;
  /** Stops accepting, lets in-flight requests finish within `timeoutMs`, then cuts what is left. */
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
 * Keeps at most `max` connections open. Past it, the connection that has waited longest without a
 * request under way (one that sent nothing, part of its headers, or sits idle between requests) is
 * closed to make room: a flood of idle connections then churns through its own slots instead of
 * locking real clients out until the headers timeout reaps it. Only when every connection is busy
 * (a request under way, a WebSocket) is the new one closed at once.
 */
function capConnections(server: Server, max: number, logger: Logger): void {
  /** Every connection still counted: closed ones leave at once, not when their close lands. */
  const open = new Set<Socket>();
  /** Those with no request under way, longest waiting first (a Set keeps insertion order). */
  const waiting = new Set<Socket>();
  const busy = (socket: Socket) => waiting.delete(socket);
  const close = (socket: Socket) => {
    open.delete(socket);
    waiting.delete(socket);
    socket.destroy();
  };
  let closedAtCap = 0;
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      waiting.delete(socket);
    });
    if (open.size > max) {
      const [longestWaiting] = waiting;
      close(longestWaiting ?? socket);
      // Logged once per thousand: a flood must not flood the log too.
      if (closedAtCap++ % 1_000 === 0) {
        logger.warn(
          { maxConnections: max, closed: closedAtCap, which: longestWaiting ? 'longest waiting' : 'new' },
          'connection cap reached: closing a connection (MAX_CONNECTIONS)',
        );
      }
      if (!longestWaiting) return;
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
}

/**
 * Serves the gateway over HTTP/1.1, and GraphQL over WebSocket (graphql-ws) on its GraphQL path.
 * Port 0 picks a free port. Close ends the WebSockets first (close code 1001: clients reconnect
 * elsewhere), then drains HTTP.
 */
export async function listen(
  gateway: Gateway,
  options: {
    port: number;
    host: string;
    logger: Logger;
    maxRequestBytes: number;
    edge: EdgeLimits;
    /** The caller scope of an Authorization header (MerchantWalletClient.scopeOf): WebSockets per key. */
    scopeOf: (authorization: string) => string;
  },
) {
  const { edge } = options;
  const server = createServer(
    {
      headersTimeout: edge.headersTimeoutMs,
      requestTimeout: edge.requestTimeoutMs,
      keepAliveTimeout: edge.keepAliveTimeoutMs,
      // Node checks the two timeouts above every this often (30 s by default): a connection is
      // closed at most a second after its time is up.
      connectionsCheckingInterval: Math.min(1_000, edge.headersTimeoutMs),
    },
    gateway,
  );
  capConnections(server, edge.maxConnections, options.logger);
  const websocket = serveGraphQLOverWebSocket(server, gateway, {
    path: gateway.graphqlEndpoint,
    maxPayload: options.maxRequestBytes,
    logger: options.logger,
    max: edge.maxWebSockets,
    perKey: edge.webSocketsPerKey,
    idleMs: edge.webSocketIdleMs,
    scopeOf: options.scopeOf,
  });
  const running: RunningServer = {
    server,
    url: await listenOn(server, options.port, options.host),
    close: async (timeoutMs) => {
      await websocket.close();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          options.logger.warn('shutdown timeout reached: closing remaining connections');
          server.closeAllConnections();
        }, timeoutMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        // Idle keep-alive sockets would hold close() open; busy ones finish their request first.
        server.closeIdleConnections();
      });
    },
  };
  return running;
}
