import { performance } from 'node:perf_hooks';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { routeLabels, type UpstreamObserver } from '../upstream/call.ts';
import type { CircuitStateName } from '../upstream/circuit-breakers.ts';

/**
 * The gateway's Prometheus metrics (prom-client), one registry per gateway, listed in
 * docs/observability.md. Every label is bounded; no key, merchant, wallet or intent id is ever one.
 */

/** Seconds; GraphQL requests run from a cache hit (~1 ms) to the request deadline (15 s). */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15];
const UPSTREAM_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The operation label of a request that never named an operation, or never got as far as one. */
export const ANONYMOUS_OPERATION = '__anonymous';
export const NO_OPERATION = '__none';
export const OTHER_OPERATION = '__other';
/** The operation label of a name not counted on its own: the key is not known to be real, or the name is not the manifest's. */
export const UNVERIFIED_OPERATION = '__unverified';

/** The Prometheus exposition of a process, or of a fleet (cluster-metrics.ts). */
export type Scrape = () => Promise<{ contentType: string; body: string }>;

export type Outcome = 'success' | 'partial' | 'error';

/** One GraphQL request, as the request-telemetry plugin saw it end. */
export interface RequestRecord {
  /** The operation's name as sent; null when anonymous; undefined when no operation was found. */
  operationName: string | null | undefined;
  /** query, mutation, subscription; undefined when the document never parsed. */
  operationType: string | undefined;
  outcome: Outcome;
  status: number;
  seconds: number;
  errorCodes: readonly string[];
  upstreamCalls: number;
}

export type IdempotencyEvent =
  /** A stored outcome was answered again (same key, same input). */
  | 'replayed'
  /** The request waited for another request holding the key (in this process, or its lease). */
  | 'waited'
  /** An earlier submission with an unknown outcome was reconciled and found the intent it had created. */
  | 'reconciled_found'
  /** An earlier submission with an unknown outcome was reconciled and had created nothing: the withdrawal is sent. */
  | 'reconciled_not_found'
  /** The key came back with a different input (IdempotencyKeyReusedError). */
  | 'key_reused'
  /** An earlier submission with an unknown outcome was reconciled and the evidence was ambiguous: nothing sent, key kept blocked. */
  | 'reconciled_ambiguous'
  /** A definite failure (401, 403, another 4xx, not sent) created nothing: the key was forgotten. */
  | 'cleared'
  /** A new key was refused unsent: its caller, or the store, holds as many keys as allowed. */
  | 'refused_full'
  /** A refused key's record was forgotten to make room for a new key (its retry is sent again). */
  | 'evicted_refusal'
  /** Refused unsent: the store did not answer within REDIS_TIMEOUT_MS, or is known not to answer. */
  | 'refused_unavailable'
  /** Refused unsent: the store's answer went unheard because this process's event loop was stalled. */
  | 'refused_busy'
  /** Refused unsent: fewer Redis replicas than REDIS_MIN_REPLICA_ACKS acknowledged the record. */
  | 'refused_unacknowledged'
  /** Refused unsent: the key's record or a payout's submission is in a format this release cannot read (a newer release's). */
  | 'refused_format'
  /** An intent the REST API created for this gateway had been claimed by another owner (must stay 0). */
  | 'claim_conflict';

export type LivePollResult = 'changed' | 'unchanged' | 'error' | 'ended';

export interface MetricsOptions {
  /** Distinct operation names given their own label; later ones count as `__other`. */
  maxOperationNames: number;
  /** Node.js process metrics (heap, GC, event-loop lag, CPU); off in unit tests of the counts. */
  processMetrics: boolean;
}

const NAME = /^[_A-Za-z][_0-9A-Za-z]{0,63}$/;

export class GatewayMetrics implements UpstreamObserver {
  readonly registry = new Registry();
  private readonly names = new Set<string>();
  private readonly maxOperationNames: number;
  private circuits: () => Record<string, CircuitStateName> = () => ({});
  /** Whether the fleet's Redis answers (RedisHealth); null: no Redis. */
  private redisResponsive: () => boolean | null = () => null;

  private readonly requests = new Counter({
    name: 'gateway_graphql_requests_total',
    help: 'GraphQL requests, by operation, operation type, outcome (success, partial, error) and HTTP status.',
    labelNames: ['operation_name', 'operation_type', 'outcome', 'status'] as const,
    registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: 'gateway_graphql_request_duration_seconds',
    help: 'Time from a GraphQL request arriving to its response being ready, by operation and type.',
    labelNames: ['operation_name', 'operation_type'] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });
  private readonly errors = new Counter({
    name: 'gateway_graphql_errors_total',
    help: 'GraphQL errors in responses, by operation and extensions.code.',
    labelNames: ['operation_name', 'code'] as const,
    registers: [this.registry],
  });
  private readonly operationUpstreamCalls = new Counter({
    name: 'gateway_graphql_upstream_calls_total',
    help: 'Upstream calls made by GraphQL requests (retries included), by operation: divide by gateway_graphql_requests_total for calls per operation.',
    labelNames: ['operation_name'] as const,
    registers: [this.registry],
  });
  private readonly upstreamRequests = new Counter({
    name: 'gateway_upstream_requests_total',
    help: 'Attempts sent to the REST API, by method, route template and HTTP status (or timeout, reset, refused, deadline, dns, too_large, error).',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly upstreamDuration = new Histogram({
    name: 'gateway_upstream_request_duration_seconds',
    help: 'Duration of one attempt sent to the REST API, by method and route template.',
    labelNames: ['method', 'route'] as const,
    buckets: UPSTREAM_BUCKETS,
    registers: [this.registry],
  });
  private readonly retries = new Counter({
    name: 'gateway_upstream_retries_total',
    help: 'GET attempts after the first (after a connection error, a 502/503/504, or a short 429).',
    labelNames: ['method', 'route'] as const,
    registers: [this.registry],
  });
  private readonly refusals = new Counter({
    name: 'gateway_upstream_refused_total',
    help: 'Upstream calls never sent: the route circuit was open (circuit_open) or the request call budget spent (budget).',
    labelNames: ['method', 'route', 'reason'] as const,
    registers: [this.registry],
  });
  private readonly cacheResults = new Counter({
    name: 'gateway_upstream_cache_total',
    help: 'GETs answered by the micro-cache (hit), by an identical call in flight (coalesced), or by the REST API (miss).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  private readonly deduplicatedQueries = new Counter({
    name: 'gateway_graphql_deduplicated_total',
    help: 'Queries answered with the result of an identical query of the same caller: executing at the same time (in_flight), or kept while its REST answers are in the micro-cache (kept).',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });
  private readonly hotPathRequests = new Counter({
    name: 'gateway_hot_path_total',
    help: 'Requests the hot path took up (a POST of a known query from a known key): answered there (served), or handed to the full pipeline (handed_over: a cost over the limits, a refused rate limit, an answer with errors, params it does not serve).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  /** Children bound once: the hot path counts every request it takes up. */
  private readonly hotPathServed = this.hotPathRequests.labels('served');
  private readonly hotPathHandedOver = this.hotPathRequests.labels('handed_over');
  private readonly trustedDocuments = new Counter({
    name: 'gateway_trusted_documents_total',
    help: 'Documents by trust: trusted (in the manifest), registered (by APQ), untrusted (ran outside the manifest), refused (enforce), not_found (an unknown id).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  private readonly idempotencyEvents = new Counter({
    name: 'gateway_idempotency_events_total',
    help: 'createWithdrawalIntent idempotency: replayed, waited, reconciled_found, reconciled_not_found, reconciled_ambiguous, key_reused, cleared, refused_full, evicted_refusal, refused_unavailable, refused_busy, refused_unacknowledged, refused_format, claim_conflict.',
    labelNames: ['event'] as const,
    registers: [this.registry],
  });

  private readonly subscriptionsOpen = new Gauge({
    name: 'gateway_subscriptions_active',
    help: 'Open subscriptions by feed (withdrawal_intent, withdrawal_intents, deposits), SSE and WebSocket together.',
    labelNames: ['feed'] as const,
    registers: [this.registry],
  });
  private readonly livePolls = new Counter({
    name: 'gateway_subscription_polls_total',
    help: 'Polls of the REST API made for subscriptions, by feed and result: changed, unchanged, error, ended (a final status, or the key refused).',
    labelNames: ['feed', 'result'] as const,
    registers: [this.registry],
  });

  constructor(options: MetricsOptions) {
    this.maxOperationNames = options.maxOperationNames;
    // Exported at 0 from the start, so that a share of requests can be drawn before the first one.
    this.hotPathServed.inc(0);
    this.hotPathHandedOver.inc(0);
    const circuits = () => this.circuits();
    const redisResponsive = () => this.redisResponsive();
    new Gauge({
      name: 'gateway_redis_responsive',
      help: "Whether the fleet's Redis answers (1) or not (0): while 0, withdrawals are refused unsent and rate limits are per process. Absent without a Redis.",
      registers: [this.registry],
      // A fleet is as responsive as its least responsive worker (cluster-metrics.ts).
      aggregator: 'min',
      collect() {
        this.reset();
        const responsive = redisResponsive();
        if (responsive !== null) this.set(responsive ? 1 : 0);
      },
    });
    new Gauge({
      name: 'gateway_upstream_circuit_state',
      help: 'Circuit breaker state per route template: 0 closed, 1 half-open, 2 open.',
      labelNames: ['method', 'route'] as const,
      registers: [this.registry],
      // A fleet's state per route is its worst worker's (cluster-metrics.ts).
      aggregator: 'max',
      collect() {
        this.reset();
        for (const [route, state] of Object.entries(circuits())) {
          const { method, template } = routeLabels(route);
          this.set({ method, route: template }, state === 'open' ? 2 : state === 'half-open' ? 1 : 0);
        }
      },
    });
    if (options.processMetrics) {
      collectDefaultMetrics({ register: this.registry });
      let last = performance.eventLoopUtilization();
      new Gauge({
        name: 'nodejs_eventloop_utilization_ratio',
        help: 'Share of the time since the previous scrape the event loop spent running code (0 to 1).',
        registers: [this.registry],
        aggregator: 'average',
        collect() {
          const now = performance.eventLoopUtilization();
          this.set(performance.eventLoopUtilization(now, last).utilization);
          last = now;
        },
      });
    }
  }

  /** Where circuit states are read at each scrape (the client is made after its metrics). */
  watchCircuits(states: () => Record<string, CircuitStateName>): void {
    this.circuits = states;
  }

  /** Reports `gateway_redis_responsive` from the process's RedisHealth. */
  watchRedis(responsive: () => boolean): void {
    this.redisResponsive = responsive;
  }

  /**
   * The operation-name label: the name for the first `maxOperationNames` distinct names, else
   * `__other` (also for a malformed name), `__anonymous`, `__none` (no operation found), or
   * `__unverified` for a name its caller may not count on its own (useRequestTelemetry's countsName).
   */
  operationLabel(name: string | null | undefined): string {
    if (name === undefined) return NO_OPERATION;
    if (name === null) return ANONYMOUS_OPERATION;
    if (name === UNVERIFIED_OPERATION) return name;
    if (this.names.has(name)) return name;
    if (this.names.size >= this.maxOperationNames || !NAME.test(name)) return OTHER_OPERATION;
    this.names.add(name);
    return name;
  }

  request(record: RequestRecord): void {
    const operation = this.operationLabel(record.operationName);
    const type = record.operationType ?? 'unknown';
    this.requests.inc({
      operation_name: operation,
      operation_type: type,
      outcome: record.outcome,
      status: String(record.status),
    });
    this.duration.observe({ operation_name: operation, operation_type: type }, record.seconds);
    for (const code of record.errorCodes) this.errors.inc({ operation_name: operation, code });
    if (record.upstreamCalls > 0) {
      this.operationUpstreamCalls.inc({ operation_name: operation }, record.upstreamCalls);
    }
  }

  sent(method: string, route: string, outcome: string, seconds: number, retry: boolean): void {
    this.upstreamRequests.inc({ method, route, status: outcome });
    this.upstreamDuration.observe({ method, route }, seconds);
    if (retry) this.retries.inc({ method, route });
  }

  refused(method: string, route: string, reason: 'circuit_open' | 'budget'): void {
    this.refusals.inc({ method, route, reason });
  }

  cache(result: 'hit' | 'miss' | 'coalesced'): void {
    this.cacheResults.inc({ result });
  }

  hotPath(outcome: 'served' | 'handed_over'): void {
    (outcome === 'served' ? this.hotPathServed : this.hotPathHandedOver).inc();
  }

  deduplicated(source: 'in_flight' | 'kept'): void {
    this.deduplicatedQueries.inc({ source });
  }

  trustedDocument(result: 'trusted' | 'registered' | 'untrusted' | 'refused' | 'not_found'): void {
    this.trustedDocuments.inc({ result });
  }

  idempotency(event: IdempotencyEvent): void {
    this.idempotencyEvents.inc({ event });
  }

  subscriptions(feed: string, delta: 1 | -1): void {
    this.subscriptionsOpen.inc({ feed }, delta);
  }

  livePoll(feed: string, result: LivePollResult): void {
    this.livePolls.inc({ feed, result });
  }

  /** This process's exposition text and its content type. */
  readonly scrape: Scrape = async () => ({
    contentType: this.registry.contentType,
    body: await this.registry.metrics(),
  });
}
