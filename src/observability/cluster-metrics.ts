import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Scrape } from './metrics.ts';

/**
 * WORKERS > 1: a scrape sees the fleet's sums. The supervisor aggregates the workers' registries
 * (prom-client's AggregatorRegistry, over the cluster IPC channel); a worker asked for /metrics asks
 * the supervisor. Gauges say how they combine (`aggregator` in metrics.ts).
 */

const ASK = 'mwg:metrics';
const ANSWER = 'mwg:metrics:answer';

/** In the supervisor: aggregates the workers' registries, and answers workers that ask. */
export function superviseMetrics(): Scrape {
  const aggregator = new AggregatorRegistry();
  const scrape: Scrape = async () => ({
    contentType: aggregator.contentType,
    body: await aggregator.clusterMetrics(),
  });
  cluster.on('message', (worker, message: { type?: string; id?: number }) => {
    if (message?.type !== ASK) return;
    scrape().then(
      (answer) => worker.send({ type: ANSWER, id: message.id, ...answer }),
      () => worker.send({ type: ANSWER, id: message.id, error: true }),
    );
  });
  return scrape;
}

/** In a worker: offers `registry` to the supervisor, and scrapes the fleet through it. */
export function workerMetrics(registry: Registry, timeoutMs = 5_000): Scrape {
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one is what makes prom-client answer the supervisor's requests in a worker.
  new AggregatorRegistry();
  let next = 0;
  const waiting = new Map<number, (answer: { contentType: string; body: string } | null) => void>();
  process.on('message', (message: { type?: string; id?: number; contentType?: string; body?: string }) => {
    if (message?.type !== ANSWER || message.id === undefined) return;
    const resolve = waiting.get(message.id);
    waiting.delete(message.id);
    resolve?.(
      message.body === undefined ? null : { contentType: String(message.contentType), body: message.body },
    );
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error('the supervisor did not answer with the metrics'));
      }, timeoutMs);
      waiting.set(id, (answer) => {
        clearTimeout(timer);
        if (answer) resolve(answer);
        else reject(new Error('the supervisor could not aggregate the metrics'));
      });
      process.send?.({ type: ASK, id });
    });
}
