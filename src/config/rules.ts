import { availableParallelism } from 'node:os';
import { namedRedis, REDIS_RULES } from './redis.ts';
import { metricsPortOf, type Rule, type Variables } from './variables.ts';

/** The number of gateway processes WORKERS asks for. */
export function workersOf(c: Variables): number {
  return c.WORKERS === 'auto' ? availableParallelism() : c.WORKERS;
}

export const RULES: readonly Rule[] = [
  ...REDIS_RULES,
  {
    reads: ['WORKERS'],
    when: (c) => workersOf(c) > 1 && namedRedis(c).length === 0,
    problem: (c) =>
      `WORKERS: ${workersOf(c)} processes need a Redis (REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES): without a shared store, one idempotency key could create a withdrawal per process, and a read on one process would not see a withdrawal made on another`,
  },
  {
    reads: ['REDIS_TIMEOUT_MS', 'REQUEST_DEADLINE_MS'],
    when: (c) => c.REDIS_TIMEOUT_MS * 4 > c.REQUEST_DEADLINE_MS && namedRedis(c).length > 0,
    problem: (c) =>
      `REDIS_TIMEOUT_MS: ${c.REDIS_TIMEOUT_MS} must be at most a quarter of REQUEST_DEADLINE_MS (${c.REQUEST_DEADLINE_MS}), so that a request that meets a Redis that hangs still has time to answer`,
  },
  {
    reads: ['IDEMPOTENCY_LEASE_MS', 'REQUEST_DEADLINE_MS'],
    when: (c) => c.IDEMPOTENCY_LEASE_MS <= c.REQUEST_DEADLINE_MS,
    problem: (c) =>
      `IDEMPOTENCY_LEASE_MS: must be longer than REQUEST_DEADLINE_MS (${c.REQUEST_DEADLINE_MS}), so that no attempt can take over a key whose POST may still be in flight`,
  },
  {
    reads: ['SUBSCRIPTION_POLL_MAX_MS', 'SUBSCRIPTION_POLL_MS'],
    when: (c) => c.SUBSCRIPTION_POLL_MAX_MS < c.SUBSCRIPTION_POLL_MS,
    problem: (c) =>
      `SUBSCRIPTION_POLL_MAX_MS: must be at least SUBSCRIPTION_POLL_MS (${c.SUBSCRIPTION_POLL_MS}), the interval it backs off from`,
  },
  {
    reads: ['HEADERS_TIMEOUT_MS', 'REQUEST_TIMEOUT_MS'],
    when: (c) => c.HEADERS_TIMEOUT_MS > c.REQUEST_TIMEOUT_MS,
    problem: (c) =>
      `HEADERS_TIMEOUT_MS: must be at most REQUEST_TIMEOUT_MS (${c.REQUEST_TIMEOUT_MS}): the headers are part of the request`,
  },
  {
    reads: ['METRICS', 'METRICS_PORT', 'PORT'],
    when: (c) => c.METRICS !== false && metricsPortOf(c) === c.PORT,
    problem: (c) =>
      `METRICS_PORT: must differ from PORT (${c.PORT}); set it to same to serve /metrics on PORT`,
  },
  {
    reads: ['PERSISTED_DOCUMENTS'],
    when: (c) =>
      Boolean(c.PERSISTED_DOCUMENTS_MODE && c.PERSISTED_DOCUMENTS_MODE !== 'off' && !c.PERSISTED_DOCUMENTS),
    problem: (c) =>
      `PERSISTED_DOCUMENTS_MODE: ${c.PERSISTED_DOCUMENTS_MODE} needs PERSISTED_DOCUMENTS, the manifest of the apps' documents`,
  },
  {
    reads: ['FEDERATION', 'PERSISTED_DOCUMENTS_MODE', 'PERSISTED_DOCUMENTS', 'NODE_ENV'],
    when: (c) =>
      c.FEDERATION === true &&
      (c.PERSISTED_DOCUMENTS_MODE === 'enforce' ||
        (c.PERSISTED_DOCUMENTS_MODE === undefined &&
          Boolean(c.PERSISTED_DOCUMENTS) &&
          c.NODE_ENV === 'production')),
    problem: () =>
      "FEDERATION: a subgraph cannot enforce the apps' trusted documents: a router sends its query plans, not the apps' documents. Enforce them at the router (Hive Gateway's persisted documents), and set PERSISTED_DOCUMENTS_MODE=off here (docs/supergraph.md)",
  },
  {
    reads: ['NODE_ENV', 'UPSTREAM_URL'],
    when: (c) => c.NODE_ENV === 'production' && !c.UPSTREAM_URL,
    problem: () =>
      'UPSTREAM_URL: required when NODE_ENV=production (the embedded sandbox is for development)',
  },
];

/** The problems of `RULES` with `c`; a rule reading a variable in `invalid` is skipped. */
export function brokenRules(c: Variables, invalid: ReadonlySet<string>): string[] {
  return RULES.filter((rule) => (rule.reads ?? []).every((name) => !invalid.has(name)) && rule.when(c)).map(
    (rule) => rule.problem(c),
  );
}
