import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { serveGraphQLOverWebSocket } from './websocket.ts';
import type { Gateway } from './yoga.ts';

/**
 * How the edge bounds what a client can hold (HEADERS_TIMEOUT_MS and the rest, see config.ts).
 * A connection that sends nothing, or part of a request, is closed once its time is up; one that
 * waits between requests, after the keep-alive timeout. Past the connection cap a new connection
 * is closed at once, so the process keeps file descriptors for the REST API and Redis.
 */
export interface EdgeLimits {
  /** From a connection's opening (or its previous response) to its request's last header. */
  headersTimeoutMs: number;
  /** From a request's first byte to its body's last; a response may then stream for longer. */
  requestTimeoutMs: number;
  /** How long a connection may wait idle between requests. */
  keepAliveTimeoutMs: number;
  /** Open connections of this process, WebSockets included. */
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
  server.maxConnections = edge.maxConnections;
  let refusedConnections = 0;
  server.on('drop', () => {
    // Logged once per thousand: a flood must not flood the log too.
    if (refusedConnections++ % 1_000 === 0) {
      options.logger.warn(
        { maxConnections: edge.maxConnections, refused: refusedConnections },
        'connection cap reached: new connections are closed at once (MAX_CONNECTIONS)',
      );
    }
  });
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
