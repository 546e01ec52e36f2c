import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Gateway } from './yoga.ts';

export interface RunningServer {
  server: Server;
  url: string;
  /** Stops accepting, lets in-flight requests finish within `timeoutMs`, then cuts what is left. */
  close(timeoutMs: number): Promise<void>;
}

/** Serves the gateway over HTTP/1.1. Port 0 picks a free port. */
export async function listen(gateway: Gateway, options: { port: number; host: string; logger: Logger }) {
  const server = createServer({ keepAliveTimeout: 5_000, requestTimeout: 60_000 }, gateway);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = ['0.0.0.0', '::', '127.0.0.1', '::1'].includes(options.host) ? 'localhost' : options.host;
  const running: RunningServer = {
    server,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: (timeoutMs) =>
      new Promise<void>((resolve) => {
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
      }),
  };
  return running;
}
