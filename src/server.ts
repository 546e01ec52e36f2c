import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { serveGraphQLOverWebSocket } from './websocket.ts';
import type { Gateway } from './yoga.ts';

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
  options: { port: number; host: string; logger: Logger; maxRequestBytes: number },
) {
  const server = createServer({ keepAliveTimeout: 5_000, requestTimeout: 60_000 }, gateway);
  const websocket = serveGraphQLOverWebSocket(server, gateway, {
    path: gateway.graphqlEndpoint,
    maxPayload: options.maxRequestBytes,
    logger: options.logger,
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
