import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { DOCUMENT_ID, sha256 } from './document-hashes.ts';
import type { TracingConfig } from './observability/tracing.ts';
import { WALKS_PER_KEY } from './plugins/operation-cost.ts';
import type { HostPort, RedisSettings, RedisTopology } from './redis/connection.ts';
import type { UpstreamClientOptions } from './upstream/client.ts';
import { CALLS_PER_KEY, CALLS_PER_KEY_PER_SECOND } from './upstream/transport.ts';

/**
 * All of the gateway's configuration, parsed once from the environment, and the one place its
 * defaults are written: every other module takes its settings as required arguments, and tests
 * start from `parseConfig({})`. Every problem is reported at once and the process does not start.
 * No other gateway file reads process.env (the sandbox has its own, src/sandbox/config.ts), and
 * the persisted-documents manifest is read here too, so a bad one is one more listed problem.
 * docs/configuration.md's table mirrors this one.
 */

const integer = (fallback: number, min: number, max: number) => {
  const error = `must be an integer from ${min} to ${max}`;
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error }).default(fallback);
};

/** As `integer`, with no default: unset is undefined (a default that depends on another variable). */
const optionalInteger = (min: number, max: number) => {
  const error = `must be an integer from ${min} to ${max}`;
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error }).optional();
};

const flag = z
  .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1')
  .optional();

/** `host:port[,host:port…]`, e.g. `10.0.0.1:26379,[fd00::1]:26379` (an IPv6 address in brackets). */
const HOST_PORT = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s,:[\]]+)):(\d{1,5})$/;
const hostPorts = z
  .string()
  .refine(
    (list) =>
      list.split(',').every((entry) => {
        const port = Number(HOST_PORT.exec(entry)?.[3]);
        return port >= 1 && port <= 65_535;
      }),
    { error: 'must be host:port[,host:port…] with ports 1-65535, e.g. 10.0.0.1:26379,[fd00::1]:26379' },
  )
  .transform((list): HostPort[] =>
    list.split(',').map((entry) => {
      const [, v6, host, port] = HOST_PORT.exec(entry) ?? [];
      return { host: v6 ?? host ?? '', port: Number(port) };
    }),
  );

const schema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: integer(4000, 0, 65_535),
  HOST: z.string().min(1).default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  UPSTREAM_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. https://api.example.com' })
    .optional(),
  UPSTREAM_CONNECT_TIMEOUT_MS: integer(2_000, 1, 600_000),
  UPSTREAM_HEADERS_TIMEOUT_MS: integer(10_000, 1, 600_000),
  UPSTREAM_BODY_TIMEOUT_MS: integer(10_000, 1, 600_000),
  UPSTREAM_RETRIES: integer(2, 0, 10),
  UPSTREAM_RETRY_BASE_DELAY_MS: integer(50, 1, 60_000),
  UPSTREAM_MAX_RETRY_AFTER_MS: integer(1_000, 0, 60_000),
  UPSTREAM_CONNECTIONS: integer(64, 1, 10_000),
  UPSTREAM_MAX_RESPONSE_BYTES: integer(16 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
  UPSTREAM_CACHE_TTL_MS: integer(1_000, 0, 3_600_000),
  UPSTREAM_CACHE_MAX_BYTES: integer(32 * 1024 * 1024, 1024, 8 * 1024 * 1024 * 1024),
  REFUSED_KEY_TTL_MS: integer(30_000, 0, 3_600_000),
  UPSTREAM_CALLS_PER_KEY: integer(CALLS_PER_KEY, 0, 10_000),
  UPSTREAM_CALLS_PER_KEY_PER_SECOND: integer(CALLS_PER_KEY_PER_SECOND, 0, 100_000),
  CIRCUIT_BREAKER_FAILURES: integer(5, 0, 1_000),
  CIRCUIT_BREAKER_HALF_OPEN_AFTER_MS: integer(10_000, 100, 3_600_000),
  MAX_UPSTREAM_CALLS_PER_REQUEST: integer(100, 1, 100_000),
  GRAPHIQL: flag,
  INTROSPECTION: flag,
  MAX_REQUEST_BYTES: integer(100_000, 1_024, 100 * 1024 * 1024),
  QUERY_MAX_DEPTH: integer(12, 1, 1_000),
  QUERY_MAX_ALIASES: integer(20, 1, 10_000),
  QUERY_MAX_TOKENS: integer(3_000, 1, 1_000_000),
  QUERY_MAX_DIRECTIVES: integer(20, 1, 10_000),
  QUERY_MAX_COST: integer(20_000, 1, 100_000_000),
  QUERY_WALKS_PER_KEY: integer(WALKS_PER_KEY, 0, 10_000),
  DOCUMENT_CACHE_MAX_BYTES: integer(32 * 1024 * 1024, 0, 8 * 1024 * 1024 * 1024),
  APQ_MAX_BYTES: integer(16 * 1024 * 1024, 0, 8 * 1024 * 1024 * 1024),
  WALLET_INDEX_MAX_BYTES: integer(64 * 1024 * 1024, 0, 8 * 1024 * 1024 * 1024),
  WALLET_INDEX_CALLS_PER_SECOND: integer(20, 1, 10_000),
  SHUTDOWN_TIMEOUT_MS: integer(10_000, 0, 600_000),
  // Unset: 5 s in production, 0 elsewhere (shutdownGraceOf).
  SHUTDOWN_GRACE_MS: optionalInteger(0, 300_000),
  HEADERS_TIMEOUT_MS: integer(10_000, 100, 600_000),
  REQUEST_TIMEOUT_MS: integer(30_000, 100, 600_000),
  KEEP_ALIVE_TIMEOUT_MS: integer(5_000, 100, 600_000),
  SEND_TIMEOUT_MS: integer(30_000, 100, 600_000),
  MAX_CONNECTIONS: integer(10_000, 1, 1_000_000),
  MAX_WEBSOCKETS: integer(5_000, 0, 1_000_000),
  WEBSOCKETS_PER_KEY: integer(20, 1, 100_000),
  // Unset: 5 % of MAX_WEBSOCKETS (websocket.ts).
  WEBSOCKETS_UNPROVEN: optionalInteger(0, 1_000_000),
  WEBSOCKET_IDLE_TIMEOUT_MS: integer(60_000, 100, 3_600_000),
  REQUEST_DEADLINE_MS: integer(15_000, 100, 600_000),
  QUERY_DEDUPLICATION: flag,
  COMPILED_EXECUTION: flag,
  COMPRESSION: flag,
  COMPRESSION_MIN_BYTES: integer(1_024, 0, 1024 * 1024),
  COMPRESSION_MAX_STREAMS: integer(1_000, 0, 1_000_000),
  IDEMPOTENCY_MAX_KEYS: integer(100_000, 1, 10_000_000),
  IDEMPOTENCY_MAX_KEYS_PER_CALLER: integer(10_000, 1, 10_000_000),
  WITHDRAWAL_CLOCK_ALLOWANCE_MS: integer(5_000, 0, 3_600_000),
  WITHDRAWAL_LATE_COMMIT_MS: integer(5_000, 0, 600_000),
  SUBSCRIPTION_POLL_MS: integer(1_000, 10, 600_000),
  SUBSCRIPTION_POLL_MAX_MS: integer(15_000, 10, 3_600_000),
  SUBSCRIPTIONS_PER_KEY: integer(20, 1, 100_000),
  MAX_SUBSCRIPTIONS: integer(10_000, 1, 10_000_000),
  IDEMPOTENCY_LEASE_MS: integer(20_000, 100, 3_600_000),
  WORKERS: z
    .union([z.literal('auto'), z.coerce.number().int().min(1).max(256)], {
      error: 'must be auto or an integer from 1',
    })
    .default(1),
  RATE_LIMIT_PER_KEY: z
    .string()
    .regex(/^[1-9]\d{0,6}\/(s|m|h)$/, { error: 'must be <requests>/<s|m|h>, e.g. 100/s' })
    .optional(),
  PERSISTED_DOCUMENTS: z.string().min(1).optional(),
  PERSISTED_DOCUMENTS_MODE: z
    .enum(['off', 'audit', 'enforce'], { error: 'must be off, audit or enforce' })
    .optional(),
  METRICS: flag,
  METRICS_PORT: z
    .union([z.literal('same'), z.coerce.number().int().min(1).max(65_535)], {
      error: 'must be a port (1-65535), or same to serve /metrics on PORT',
    })
    .optional(),
  METRICS_MAX_OPERATION_NAMES: integer(100, 1, 10_000),
  OTEL_SDK_DISABLED: flag,
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none'], { error: 'must be otlp or none' }).default('otlp'),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z
    .literal('http/json', { error: 'only http/json is supported (OTLP over HTTP, JSON)' })
    .optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z
    .literal('http/json', { error: 'only http/json is supported (OTLP over HTTP, JSON)' })
    .optional(),
  OTEL_SERVICE_NAME: z.string().min(1).max(200).default('merchant-wallet-gateway'),
  OTEL_TRACES_SAMPLER: z
    .enum([
      'always_on',
      'always_off',
      'traceidratio',
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
    ])
    .default('parentbased_always_on'),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(1),
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' }).optional(),
  REDIS_SENTINELS: hostPorts.optional(),
  REDIS_SENTINEL_MASTER: z.string().min(1).max(200).optional(),
  REDIS_SENTINEL_PASSWORD: z.string().min(1).optional(),
  REDIS_CLUSTER_NODES: hostPorts.optional(),
  REDIS_USERNAME: z.string().min(1).optional(),
  REDIS_PASSWORD: z.string().min(1).optional(),
  REDIS_TIMEOUT_MS: integer(500, 10, 60_000),
  REDIS_MIN_REPLICA_ACKS: z.coerce.number().int().min(0).max(16).optional(),
  SANDBOX_PORT: integer(0, 0, 65_535),
  // Unset: the sandbox's own documented default (src/sandbox/config.ts).
  SANDBOX_ADMIN_TOKEN: z.string().min(8).optional(),
  // How long each deposit and intent stays in each open status (0: statuses move only through the admin API).
  SANDBOX_AUTO_ADVANCE_MS: integer(8_000, 0, 3_600_000),
  // A new deposit for the demo merchant every so often (0: none).
  SANDBOX_DEPOSIT_EVERY_MS: integer(25_000, 0, 3_600_000),
});

/** What documents outside the persisted-documents manifest may do (src/plugins/trusted-documents.ts). */
export type TrustedDocumentsMode = 'off' | 'audit' | 'enforce';

/** The static bounds every document is checked against before it runs (src/plugins/query-limits.ts). */
export interface QueryLimitSettings {
  maxDepth: number;
  maxAliases: number;
  maxTokens: number;
  maxDirectives: number;
  /**
   * Sum over fields of 1, with a connection's subtree counted first/last (default 20) times, plus
   * the REST reads over wallets' lists (plugins/operation-cost.ts, operationCost).
   */
  maxCost: number;
  /** Operations of one key that may walk a whole list running at once; 0: no wait (plugins/operation-cost.ts). */
  walksPerKey: number;
}

/** How connections are bounded and reaped at the edge (src/server.ts, src/websocket.ts). */
export interface EdgeLimits {
  /** From a connection's opening (or its previous response) to its request's last header. */
  headersTimeoutMs: number;
  /** From a request's first byte to its body's last; a response may then stream for longer. */
  requestTimeoutMs: number;
  /** How long a connection may wait idle between requests. */
  keepAliveTimeoutMs: number;
  /** How long an answer may make no progress while its client does not read; then it is closed. */
  sendTimeoutMs: number;
  /** Open connections of this process, WebSockets included (see capConnections). */
  maxConnections: number;
  /** WebSockets of this process; past it an upgrade is answered 503. */
  maxWebSockets: number;
  /** Acknowledged WebSockets of one API key in this process; past it connection_init is refused. */
  webSocketsPerKey: number;
  /** A WebSocket with no operation under way for this long is closed. */
  webSocketIdleMs: number;
  /**
   * WebSockets of keys the REST API has not accepted lately, all such keys together (websocket.ts):
   * made-up keys cannot take real merchants' slots. Undefined: 5 % of maxWebSockets.
   */
  webSocketsUnproven?: number | undefined;
}

export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  logLevel: string;
  /** The REST API to front; undefined starts the embedded sandbox. */
  upstreamURL: string | undefined;
  upstream: Omit<UpstreamClientOptions, 'baseURL'>;
  graphiql: boolean;
  introspection: boolean;
  maxRequestBytes: number;
  queryLimits: QueryLimitSettings;
  shutdownTimeoutMs: number;
  /**
   * SHUTDOWN_GRACE_MS: after SIGTERM, how long /readyz answers 503 while everything is still
   * served, so that load balancers stop sending before the listener closes.
   */
  shutdownGraceMs: number;
  /** How connections are bounded and reaped at the edge (server.ts). */
  edge: EdgeLimits;
  requestDeadlineMs: number;
  /** Upstream calls one GraphQL request may make, retries included; past it, fields fail. */
  maxUpstreamCallsPerRequest: number;
  /**
   * Estimated heap of parsed, validated documents kept across requests, filled only by keys the
   * REST API accepted lately and manifest documents (plugins/document-cache.ts); 0 keeps none.
   */
  documentCacheMaxBytes: number;
  /** Bytes of APQ registrations kept, per key scope, filled only by accepted keys (plugins/trusted-documents.ts). */
  apqMaxBytes: number;
  /** The per-merchant wallet index (src/loaders/wallet-index.ts): its byte bound (0: off) and its build's REST calls per second. */
  walletIndex: { maxBytes: number; callsPerSecond: number };
  /** Identical concurrent queries of one caller share one execution. */
  queryDeduplication: boolean;
  /** COMPILED_EXECUTION: queries and mutations run as code compiled once per document (graphql-jit). */
  compiledExecution: boolean;
  /** COMPRESSION, COMPRESSION_MIN_BYTES, COMPRESSION_MAX_STREAMS: brotli/gzip answers (plugins/compression.ts); null: none. */
  compression: { minBytes: number; maxStreams: number } | null;
  /** Bound on the idempotency keys the in-process store holds; a new key past it is refused unsent. */
  idempotencyMaxKeys: number;
  /** Bound on the idempotency keys one caller scope (API key) holds, in memory and in Redis. */
  idempotencyMaxKeysPerCaller: number;
  /** Reconciliation's allowances (withdrawals/reconcile.ts). */
  reconcile: { clockAllowanceMs: number; lateCommitMs: number };
  /** How long an attempt holds its idempotency key while its POST may be in flight. */
  idempotencyLeaseMs: number;
  /** Subscriptions: the poll interval and its backoff ceiling, and how many may be open per key and in all (per process). */
  subscriptions: { pollMs: number; maxPollMs: number; perKey: number; max: number };
  /** Gateway processes on one port (node:cluster); more than 1 needs a Redis. */
  workers: number;
  /** Requests per key and window; undefined: no inbound limit. */
  rateLimitPerKey: { points: number; durationSeconds: number } | undefined;
  /** The fleet's shared Redis (idempotency, leases, notices, limits); undefined: in-process stores. */
  redis: RedisSettings | undefined;
  /** The persisted-documents manifest (hash → text; empty without PERSISTED_DOCUMENTS), and what documents outside it may do. */
  trustedDocuments: {
    manifestPath: string | undefined;
    manifest: ReadonlyMap<string, string>;
    mode: TrustedDocumentsMode;
  };
  /** Prometheus metrics; `port` undefined: GET /metrics on the gateway's port. */
  metrics: { port: number | undefined; maxOperationNames: number } | undefined;
  /** OpenTelemetry tracing; undefined: off (no OTLP endpoint, OTEL_SDK_DISABLED, or exporter none). */
  tracing: TracingConfig | undefined;
  /** The embedded sandbox of `npm start` without UPSTREAM_URL; adminToken unset: the sandbox's default. */
  sandbox: { port: number; adminToken: string | undefined; autoAdvanceMs: number; depositEveryMs: number };
}

export class ConfigError extends Error {
  readonly problems: string[];

  constructor(problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.problems = problems;
    this.name = 'ConfigError';
  }
}

/** Every variable the gateway reads. */
export const KNOWN_VARIABLES: readonly string[] = Object.keys(schema.shape);

/**
 * Prefixes of names only the gateway's variables use. A variable under one that the gateway does
 * not read is a mistake (REDIS_ULR, RATE_LIMIT_PER_KY) that would otherwise be ignored in silence
 * (each replica on its own in-process store, no rate limit), so it is refused, with the closest
 * known name. Every variable of the schema is under one of these except NODE_ENV, PORT, HOST and
 * the OTEL_ ones (test/unit/config.test.ts checks it): those prefixes are other software's too.
 * Node reads NODE_OPTIONS and the image sets NODE_VERSION, the OTLP exporter reads
 * OTEL_EXPORTER_OTLP_HEADERS and others itself, and the container has a HOSTNAME.
 */
export const OWNED_PREFIXES: readonly string[] = [
  'APQ_',
  'CIRCUIT_BREAKER_',
  'COMPILED_EXECUTION',
  'COMPRESSION',
  'DOCUMENT_CACHE',
  'GRAPHIQL',
  'HEADERS_TIMEOUT',
  'IDEMPOTENCY_',
  'INTROSPECTION',
  'KEEP_ALIVE_',
  'LOG_LEVEL',
  'MAX_',
  'METRICS',
  'PERSISTED_DOCUMENTS',
  'QUERY_',
  'RATE_LIMIT',
  'REDIS_',
  'REFUSED_KEY',
  'REQUEST_DEADLINE',
  'REQUEST_TIMEOUT',
  'SANDBOX_',
  'SEND_TIMEOUT',
  'SHUTDOWN_',
  'SUBSCRIPTION',
  'UPSTREAM_',
  'WALLET_INDEX',
  'WEBSOCKET',
  'WITHDRAWAL',
  'WORKERS',
];

/**
 * Names that other software sets under the gateway's prefixes, left alone: Kubernetes' service
 * links (a Service named redis gives every pod of its namespace REDIS_SERVICE_HOST,
 * REDIS_PORT=tcp://…, REDIS_PORT_6379_TCP_ADDR and the like, unless enableServiceLinks is false)
 * and the REDIS_TLS_URL Heroku sets beside REDIS_URL.
 */
function setByOthers(name: string, value: string): boolean {
  return (
    /_SERVICE_(HOST|PORT)(_[A-Z0-9_]+)?$/.test(name) ||
    /_PORT_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?$/.test(name) ||
    (/_PORT$/.test(name) && /^(tcp|udp|sctp):\/\//.test(value)) ||
    name === 'REDIS_TLS_URL'
  );
}

/** One problem per variable under an owned prefix that the gateway does not read. */
function unknownVariables(env: Record<string, string>): string[] {
  return Object.entries(env)
    .filter(
      ([name, value]) =>
        OWNED_PREFIXES.some((prefix) => name.startsWith(prefix)) &&
        !KNOWN_VARIABLES.includes(name) &&
        !setByOthers(name, value),
    )
    .map(([name]) => `${name} is not a variable the gateway reads; did you mean ${closestVariable(name)}?`);
}

/** The known variable fewest single-character edits away from `name` (the first of equals). */
function closestVariable(name: string): string {
  let best = { name: '', distance: Number.POSITIVE_INFINITY };
  for (const known of KNOWN_VARIABLES) {
    const distance = editDistance(name, known);
    if (distance < best.distance) best = { name: known, distance };
  }
  return best.name;
}

/** Levenshtein distance: insertions, deletions and substitutions. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

export function parseConfig(env: Record<string, string | undefined>): Config {
  // Empty strings count as unset, as in most shells' `VAR= npm start`.
  const present = Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '',
    ),
  );
  const result = schema.safeParse(present);
  // A variable with a bad value is reported, and the checks between variables still run on the
  // others (those that involve it are skipped), so every problem is listed in one go. A misspelt
  // variable comes first: it is the likeliest cause of what follows it.
  const problems: string[] = unknownVariables(present);
  const invalid = new Set<string>();
  let c: z.infer<typeof schema>;
  if (result.success) c = result.data;
  else {
    for (const issue of result.error.issues) {
      invalid.add(String(issue.path[0]));
      problems.push(`${issue.path.join('.')}: ${issue.message}`);
    }
    const others = schema.safeParse(
      Object.fromEntries(Object.entries(present).filter(([k]) => !invalid.has(k))),
    );
    if (!others.success) throw new ConfigError(problems);
    c = others.data;
  }
  const workers = c.WORKERS === 'auto' ? availableParallelism() : c.WORKERS;
  // What the variables mean together; a check is skipped when one of its variables was invalid.
  const among = (...names: string[]) => names.every((name) => !invalid.has(name));
  const redis = redisOf(c, problems);
  if (among('WORKERS') && workers > 1 && !redis && !namedRedis(c).length) {
    problems.push(
      `WORKERS: ${workers} processes need a Redis (REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES): without a shared store, one idempotency key could create a withdrawal per process, and a read on one process would not see a withdrawal made on another`,
    );
  }
  if (
    among('REDIS_TIMEOUT_MS', 'REQUEST_DEADLINE_MS') &&
    c.REDIS_TIMEOUT_MS * 4 > c.REQUEST_DEADLINE_MS &&
    namedRedis(c).length > 0
  ) {
    problems.push(
      `REDIS_TIMEOUT_MS: ${c.REDIS_TIMEOUT_MS} must be at most a quarter of REQUEST_DEADLINE_MS (${c.REQUEST_DEADLINE_MS}), so that a request that meets a Redis that hangs still has time to answer`,
    );
  }
  if (
    among('IDEMPOTENCY_LEASE_MS', 'REQUEST_DEADLINE_MS') &&
    c.IDEMPOTENCY_LEASE_MS <= c.REQUEST_DEADLINE_MS
  ) {
    problems.push(
      `IDEMPOTENCY_LEASE_MS: must be longer than REQUEST_DEADLINE_MS (${c.REQUEST_DEADLINE_MS}), so that no attempt can take over a key whose POST may still be in flight`,
    );
  }
  if (
    among('SUBSCRIPTION_POLL_MAX_MS', 'SUBSCRIPTION_POLL_MS') &&
    c.SUBSCRIPTION_POLL_MAX_MS < c.SUBSCRIPTION_POLL_MS
  ) {
    problems.push(
      `SUBSCRIPTION_POLL_MAX_MS: must be at least SUBSCRIPTION_POLL_MS (${c.SUBSCRIPTION_POLL_MS}), the interval it backs off from`,
    );
  }
  if (among('HEADERS_TIMEOUT_MS', 'REQUEST_TIMEOUT_MS') && c.HEADERS_TIMEOUT_MS > c.REQUEST_TIMEOUT_MS) {
    problems.push(
      `HEADERS_TIMEOUT_MS: must be at most REQUEST_TIMEOUT_MS (${c.REQUEST_TIMEOUT_MS}): the headers are part of the request`,
    );
  }
  if (among('METRICS', 'METRICS_PORT', 'PORT') && c.METRICS !== false && metricsPortOf(c) === c.PORT) {
    problems.push(
      `METRICS_PORT: must differ from PORT (${c.PORT}); set it to same to serve /metrics on PORT`,
    );
  }
  if (
    among('PERSISTED_DOCUMENTS') &&
    c.PERSISTED_DOCUMENTS_MODE &&
    c.PERSISTED_DOCUMENTS_MODE !== 'off' &&
    !c.PERSISTED_DOCUMENTS
  ) {
    problems.push(
      `PERSISTED_DOCUMENTS_MODE: ${c.PERSISTED_DOCUMENTS_MODE} needs PERSISTED_DOCUMENTS, the manifest of the apps' documents`,
    );
  }
  if (among('NODE_ENV', 'UPSTREAM_URL') && c.NODE_ENV === 'production' && !c.UPSTREAM_URL) {
    problems.push(
      'UPSTREAM_URL: required when NODE_ENV=production (the embedded sandbox is for development)',
    );
  }
  let manifest: ReadonlyMap<string, string> = new Map();
  if (c.PERSISTED_DOCUMENTS) {
    try {
      manifest = loadManifest(c.PERSISTED_DOCUMENTS);
    } catch (error) {
      problems.push(`PERSISTED_DOCUMENTS: ${(error as Error).message}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    env: c.NODE_ENV,
    port: c.PORT,
    host: c.HOST,
    logLevel: c.LOG_LEVEL,
    upstreamURL: c.UPSTREAM_URL,
    upstream: {
      connectTimeoutMs: c.UPSTREAM_CONNECT_TIMEOUT_MS,
      headersTimeoutMs: c.UPSTREAM_HEADERS_TIMEOUT_MS,
      bodyTimeoutMs: c.UPSTREAM_BODY_TIMEOUT_MS,
      maxRetries: c.UPSTREAM_RETRIES,
      retryBaseDelayMs: c.UPSTREAM_RETRY_BASE_DELAY_MS,
      maxRetryAfterMs: c.UPSTREAM_MAX_RETRY_AFTER_MS,
      connections: c.UPSTREAM_CONNECTIONS,
      maxResponseBytes: c.UPSTREAM_MAX_RESPONSE_BYTES,
      cacheTtlMs: c.UPSTREAM_CACHE_TTL_MS,
      cacheMaxBytes: c.UPSTREAM_CACHE_MAX_BYTES,
      refusedKeyTtlMs: c.REFUSED_KEY_TTL_MS,
      fairShare: {
        callsPerKey: c.UPSTREAM_CALLS_PER_KEY,
        callsPerSecond: c.UPSTREAM_CALLS_PER_KEY_PER_SECOND,
      },
      circuitBreaker: {
        failures: c.CIRCUIT_BREAKER_FAILURES,
        halfOpenAfterMs: c.CIRCUIT_BREAKER_HALF_OPEN_AFTER_MS,
      },
    },
    maxUpstreamCallsPerRequest: c.MAX_UPSTREAM_CALLS_PER_REQUEST,
    documentCacheMaxBytes: c.DOCUMENT_CACHE_MAX_BYTES,
    apqMaxBytes: c.APQ_MAX_BYTES,
    walletIndex: { maxBytes: c.WALLET_INDEX_MAX_BYTES, callsPerSecond: c.WALLET_INDEX_CALLS_PER_SECOND },
    graphiql: c.GRAPHIQL ?? c.NODE_ENV !== 'production',
    introspection: c.INTROSPECTION ?? c.GRAPHIQL ?? c.NODE_ENV !== 'production',
    maxRequestBytes: c.MAX_REQUEST_BYTES,
    queryLimits: {
      maxDepth: c.QUERY_MAX_DEPTH,
      maxAliases: c.QUERY_MAX_ALIASES,
      maxTokens: c.QUERY_MAX_TOKENS,
      maxDirectives: c.QUERY_MAX_DIRECTIVES,
      maxCost: c.QUERY_MAX_COST,
      walksPerKey: c.QUERY_WALKS_PER_KEY,
    },
    shutdownTimeoutMs: c.SHUTDOWN_TIMEOUT_MS,
    shutdownGraceMs: shutdownGraceOf(c),
    edge: {
      headersTimeoutMs: c.HEADERS_TIMEOUT_MS,
      requestTimeoutMs: c.REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: c.KEEP_ALIVE_TIMEOUT_MS,
      sendTimeoutMs: c.SEND_TIMEOUT_MS,
      maxConnections: c.MAX_CONNECTIONS,
      maxWebSockets: c.MAX_WEBSOCKETS,
      webSocketsPerKey: c.WEBSOCKETS_PER_KEY,
      webSocketIdleMs: c.WEBSOCKET_IDLE_TIMEOUT_MS,
      webSocketsUnproven: c.WEBSOCKETS_UNPROVEN,
    },
    requestDeadlineMs: c.REQUEST_DEADLINE_MS,
    queryDeduplication: c.QUERY_DEDUPLICATION ?? true,
    compiledExecution: c.COMPILED_EXECUTION ?? true,
    compression:
      (c.COMPRESSION ?? true)
        ? { minBytes: c.COMPRESSION_MIN_BYTES, maxStreams: c.COMPRESSION_MAX_STREAMS }
        : null,
    idempotencyMaxKeys: c.IDEMPOTENCY_MAX_KEYS,
    idempotencyMaxKeysPerCaller: c.IDEMPOTENCY_MAX_KEYS_PER_CALLER,
    reconcile: {
      clockAllowanceMs: c.WITHDRAWAL_CLOCK_ALLOWANCE_MS,
      lateCommitMs: c.WITHDRAWAL_LATE_COMMIT_MS,
    },
    idempotencyLeaseMs: c.IDEMPOTENCY_LEASE_MS,
    subscriptions: {
      pollMs: c.SUBSCRIPTION_POLL_MS,
      maxPollMs: c.SUBSCRIPTION_POLL_MAX_MS,
      perKey: c.SUBSCRIPTIONS_PER_KEY,
      max: c.MAX_SUBSCRIPTIONS,
    },
    redis,
    workers,
    rateLimitPerKey: c.RATE_LIMIT_PER_KEY ? parseRate(c.RATE_LIMIT_PER_KEY) : undefined,
    metrics:
      c.METRICS === false
        ? undefined
        : { port: metricsPortOf(c), maxOperationNames: c.METRICS_MAX_OPERATION_NAMES },
    tracing: tracingOf(c),
    trustedDocuments: {
      manifestPath: c.PERSISTED_DOCUMENTS,
      manifest,
      // With a manifest, production runs only its documents unless told otherwise.
      mode:
        c.PERSISTED_DOCUMENTS_MODE ??
        (c.PERSISTED_DOCUMENTS && c.NODE_ENV === 'production' ? 'enforce' : 'off'),
    },
    sandbox: {
      port: c.SANDBOX_PORT,
      adminToken: c.SANDBOX_ADMIN_TOKEN,
      autoAdvanceMs: c.SANDBOX_AUTO_ADVANCE_MS,
      depositEveryMs: c.SANDBOX_DEPOSIT_EVERY_MS,
    },
  };
}

/**
 * The fleet's Redis, named by exactly one of REDIS_URL, REDIS_SENTINELS (with
 * REDIS_SENTINEL_MASTER) and REDIS_CLUSTER_NODES; every problem with them is listed at once.
 * REDIS_MIN_REPLICA_ACKS defaults to what each topology can keep through a failover: 0 for one
 * server (it has no failover), 1 with Sentinel and with a Cluster (a promoted replica has every
 * claim a POST was sent on).
 */
function redisOf(c: z.infer<typeof schema>, problems: string[]): RedisSettings | undefined {
  const before = problems.length;
  const named = namedRedis(c);
  if (named.length > 1) {
    problems.push(
      `${named.join(', ')}: set exactly one (REDIS_URL for one server, REDIS_SENTINELS for Sentinel, REDIS_CLUSTER_NODES for a Cluster)`,
    );
  }
  if (c.REDIS_SENTINELS && !c.REDIS_SENTINEL_MASTER) {
    problems.push('REDIS_SENTINEL_MASTER: required with REDIS_SENTINELS (the name the Sentinels monitor)');
  }
  if (c.REDIS_SENTINEL_MASTER && !c.REDIS_SENTINELS) {
    problems.push('REDIS_SENTINEL_MASTER: only means something with REDIS_SENTINELS');
  }
  if (c.REDIS_SENTINEL_PASSWORD && !c.REDIS_SENTINELS) {
    problems.push('REDIS_SENTINEL_PASSWORD: only means something with REDIS_SENTINELS');
  }
  for (const name of ['REDIS_USERNAME', 'REDIS_PASSWORD'] as const) {
    if (c[name] && c.REDIS_URL) problems.push(`${name}: with REDIS_URL, credentials go in the URL`);
    else if (c[name] && named.length === 0) {
      problems.push(`${name}: only means something with REDIS_SENTINELS or REDIS_CLUSTER_NODES`);
    }
  }
  if (c.REDIS_MIN_REPLICA_ACKS !== undefined && named.length === 0) {
    problems.push('REDIS_MIN_REPLICA_ACKS: only means something with a Redis');
  }
  if (problems.length > before) return undefined;
  const credentials = { username: c.REDIS_USERNAME, password: c.REDIS_PASSWORD };
  let topology: RedisTopology;
  if (c.REDIS_URL) topology = { kind: 'single', url: c.REDIS_URL };
  else if (c.REDIS_SENTINELS && c.REDIS_SENTINEL_MASTER) {
    topology = {
      kind: 'sentinel',
      sentinels: c.REDIS_SENTINELS,
      master: c.REDIS_SENTINEL_MASTER,
      sentinelPassword: c.REDIS_SENTINEL_PASSWORD,
      ...credentials,
    };
  } else if (c.REDIS_CLUSTER_NODES)
    topology = { kind: 'cluster', nodes: c.REDIS_CLUSTER_NODES, ...credentials };
  else return undefined;
  return {
    topology,
    timeoutMs: c.REDIS_TIMEOUT_MS,
    minReplicaAcks: c.REDIS_MIN_REPLICA_ACKS ?? (topology.kind === 'single' ? 0 : 1),
  };
}

/** The variables that name a Redis, of the three that may. */
function namedRedis(c: z.infer<typeof schema>): string[] {
  return [
    c.REDIS_URL && 'REDIS_URL',
    c.REDIS_SENTINELS && 'REDIS_SENTINELS',
    c.REDIS_CLUSTER_NODES && 'REDIS_CLUSTER_NODES',
  ].filter((name): name is string => Boolean(name));
}

/**
 * Where /metrics is served: PORT (undefined) or a port of its own. In production it defaults to
 * 9464 (Prometheus exporters' customary port), so that the public port, the one a load balancer
 * routes, never shows what the gateway is doing to whoever asks; METRICS_PORT=same opts back in.
 */
function metricsPortOf(c: z.infer<typeof schema>): number | undefined {
  if (c.METRICS_PORT === 'same') return undefined;
  return c.METRICS_PORT ?? (c.NODE_ENV === 'production' ? 9464 : undefined);
}

/**
 * SHUTDOWN_GRACE_MS unset: 5 s in production, long enough for a load balancer that checks /readyz
 * every second or two to see two failures, and for Kubernetes to take the pod out of its
 * Service's endpoints; 0 elsewhere, so a developer's Ctrl-C stops at once.
 */
function shutdownGraceOf(c: z.infer<typeof schema>): number {
  return c.SHUTDOWN_GRACE_MS ?? (c.NODE_ENV === 'production' ? 5_000 : 0);
}

/** Traces go where the standard variables say: the traces endpoint as given, or the base one + /v1/traces. */
function tracingOf(c: z.infer<typeof schema>): TracingConfig | undefined {
  if (c.OTEL_SDK_DISABLED || c.OTEL_TRACES_EXPORTER === 'none') return undefined;
  const url =
    c.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (c.OTEL_EXPORTER_OTLP_ENDPOINT && `${c.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/$/, '')}/v1/traces`);
  if (!url) return undefined;
  return {
    url,
    serviceName: c.OTEL_SERVICE_NAME,
    sampler: c.OTEL_TRACES_SAMPLER,
    ratio: c.OTEL_TRACES_SAMPLER_ARG,
  };
}

function parseRate(value: string): { points: number; durationSeconds: number } {
  const [points = '0', unit = 's'] = value.split('/');
  return { points: Number(points), durationSeconds: { s: 1, m: 60, h: 3_600 }[unit] ?? 1 };
}

/** The manifest as hash → text; each document's hash is checked against its text. */
export function loadManifest(path: string): Map<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Error(
      `${path}: a persisted-documents manifest is a JSON object of "sha256:<hex>": "<document>"`,
    );
  }
  const manifest = new Map<string, string>();
  for (const [id, text] of Object.entries(parsed)) {
    const hash = DOCUMENT_ID.exec(id)?.[1];
    if (!hash || typeof text !== 'string')
      throw new Error(`${path}: "${id.slice(0, 80)}" is not a sha256 id of a document`);
    if (sha256(text) !== hash) throw new Error(`${path}: the document of ${id} does not hash to its id`);
    manifest.set(hash, text);
  }
  return manifest;
}

export function loadConfig(): Config {
  return parseConfig(process.env);
}
