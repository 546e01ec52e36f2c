import { readFileSync } from 'node:fs';
import { DOCUMENT_ID, sha256 } from '../execution/document-hashes.ts';
import type { TracingConfig } from '../observability/tracing.ts';
import type { RedisSettings } from '../redis/connection.ts';
import type { UpstreamClientOptions } from '../upstream/client.ts';
import { redisOf } from './redis.ts';
import { brokenRules, workersOf } from './rules.ts';
import { unknownVariables } from './unknown-variables.ts';
import { metricsPortOf, schema, shutdownGraceOf, type Variables } from './variables.ts';

export { OWNED_PREFIXES } from './unknown-variables.ts';
export { KNOWN_VARIABLES } from './variables.ts';

/**
 * All of the gateway's configuration, parsed once from the environment (docs/configuration.md),
 * every problem listed at once; tests start from `parseConfig({})`. The variables are
 * config/variables.ts's, the rules between them config/rules.ts's; no other gateway file reads
 * process.env, and the persisted-documents manifest is read here too.
 */

/** What documents outside the persisted-documents manifest may do (src/plugins/trusted-documents.ts). */
export type TrustedDocumentsMode = 'off' | 'audit' | 'enforce';

/** The static bounds every document is checked against before it runs (src/plugins/query-limits.ts). */
export interface QueryLimitSettings {
  maxDepth: number;
  maxAliases: number;
  maxTokens: number;
  maxDirectives: number;
  /** The most an operation may cost (execution/operation-cost.ts). */
  maxCost: number;
  /** One merchant's operations that may walk a whole list at once; 0: no wait (plugins/cost-limit.ts). */
  walksPerKey: number;
}

/** How connections are bounded and reaped at the edge (src/server.ts, src/websocket/websocket.ts). */
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
  /** WebSockets of keys not accepted lately, all together; undefined: 5 % of maxWebSockets. */
  webSocketsUnproven?: number | undefined;
}

export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  logLevel: string;
  /** The REST API to front; undefined starts the embedded sandbox. */
  upstreamURL: string | undefined;
  upstream: Omit<UpstreamClientOptions, 'baseURL' | 'scopes'>;
  graphiql: boolean;
  introspection: boolean;
  maxRequestBytes: number;
  queryLimits: QueryLimitSettings;
  shutdownTimeoutMs: number;
  /** After SIGTERM, how long /readyz answers 503 while everything is still served. */
  shutdownGraceMs: number;
  /** How connections are bounded and reaped at the edge (server.ts). */
  edge: EdgeLimits;
  requestDeadlineMs: number;
  /** Upstream calls one GraphQL request may make, retries included; past it, fields fail. */
  maxUpstreamCallsPerRequest: number;
  /** Estimated heap of parsed, validated documents kept across requests (plugins/document-cache.ts). */
  documentCacheMaxBytes: number;
  /** Bytes of APQ registrations kept, per key scope, filled only by accepted keys (plugins/trusted-documents.ts). */
  apqMaxBytes: number;
  /** The per-merchant wallet index (src/loaders/wallet-index.ts): its byte bound (0: off) and its build's REST calls per second. */
  walletIndex: { maxBytes: number; callsPerSecond: number };
  /** Identical concurrent queries of one caller share one execution. */
  queryDeduplication: boolean;
  /** Queries run as code compiled once per document (plugins/compiled-execution.ts). */
  compiledExecution: boolean;
  /** Compiled queries of accepted keys served straight from Node's request (execution/hot-path.ts). */
  hotPath: boolean;
  /** The schema served as a Federation v2 subgraph (docs/supergraph.md). */
  federation: boolean;
  /** COMPRESSION, COMPRESSION_MIN_BYTES, COMPRESSION_MAX_STREAMS: brotli/gzip answers (plugins/compression.ts); null: none. */
  compression: { minBytes: number; maxStreams: number } | null;
  /** Bound on the idempotency keys the in-process store holds; a new key past it is refused unsent. */
  idempotencyMaxKeys: number;
  /** Bound on the idempotency keys one caller scope (API key) holds, in memory and in Redis. */
  idempotencyMaxKeysPerCaller: number;
  /** Reconciliation's allowances (withdrawals/reconcile.ts). */
  reconcile: { clockAllowanceMs: number; lateCommitMs: number };
  /** How long a request holds its idempotency key (its lease) while its POST may be in flight. */
  idempotencyLeaseMs: number;
  /** Subscriptions: the poll interval and its backoff ceiling, and how many may be open per key and in all (per process). */
  subscriptions: { pollMs: number; maxPollMs: number; perKey: number; max: number };
  /** Gateway processes on one port (node:cluster); more than 1 needs a Redis. */
  workers: number;
  /** Requests per key and window; undefined: no inbound limit. */
  rateLimitPerKey: { points: number; durationSeconds: number } | undefined;
  /** RATE_LIMIT_PER_MERCHANT: one limit for all of a merchant's keys (merchants.ts); a key of no known merchant is its own. */
  rateLimitPerMerchant: { points: number; durationSeconds: number } | undefined;
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
  let c: Variables;
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
  problems.push(...brokenRules(c, invalid));
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
    hotPath: c.HOT_PATH ?? true,
    federation: c.FEDERATION ?? false,
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
    redis: redisOf(c),
    workers: workersOf(c),
    rateLimitPerKey: c.RATE_LIMIT_PER_KEY ? parseRate(c.RATE_LIMIT_PER_KEY) : undefined,
    rateLimitPerMerchant: c.RATE_LIMIT_PER_MERCHANT ? parseRate(c.RATE_LIMIT_PER_MERCHANT) : undefined,
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

/** Traces go where the standard variables say: the traces endpoint as given, or the base one + /v1/traces. */
function tracingOf(c: Variables): TracingConfig | undefined {
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
