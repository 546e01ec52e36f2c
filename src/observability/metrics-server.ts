import { createServer, type Server } from 'node:http';
import { listenOn } from '../server.ts';

/**
 * GET /metrics on a port of its own (METRICS_PORT), so the metrics need not be reachable where the
 * GraphQL endpoint is. `scrape` gives the exposition text: one process's, or a fleet's summed by
 * the cluster supervisor.
 */
export async function listenMetrics(
  scrape: () => Promise<{ contentType: string; body: string }>,
  options: { port: number; host: string },
): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: metrics are at /metrics\n');
      return;
    }
    if (request.method !== 'GET') {
      response.writeHead(405, { allow: 'GET' }).end();
      return;
    }
    scrape().then(
      ({ contentType, body }) => response.writeHead(200, { 'content-type': contentType }).end(body),
      () => response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
    );
  });
  return {
    server,
    url: `${await listenOn(server, options.port, options.host)}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
