import { z } from 'zod';
import { WALKS_PER_KEY } from '../plugins/cost-limit.ts';
import type { HostPort } from '../redis/connection.ts';
import { CALLS_PER_KEY, CALLS_PER_KEY_PER_SECOND } from '../upstream/transport.ts';

/**
 * Every variable the gateway reads, with its type, bounds and default (docs/configuration.md's
 * table); a default that depends on another variable is a function below the schema.
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

export const schema = z.object({
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
  HOT_PATH: flag,
  FEDERATION: flag,
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
  RATE_LIMIT_PER_MERCHANT: z
    .string()
    .regex(/^[1-9]\d{0,6}\/(s|m|h)$/, { error: 'must be <requests>/<s|m|h>, e.g. 300/s' })
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

/** The variables as the schema parsed them. */
export type Variables = z.infer<typeof schema>;

/**
 * What the variables mean together: one rule per problem, checked in the order of RULES
 * (rules.ts) after each variable's own check, so that every problem is listed in one go.
 */
export interface Rule {
  /**
   * The variables the rule compares: it is skipped when one of them had an invalid value (that
   * value's own problem is listed instead). Absent: checked whatever else is invalid.
   */
  reads?: readonly string[];
  /** Whether the variables break the rule. */
  when: (c: Variables) => boolean;
  /** The problem listed when they do, naming the variable to change first. */
  problem: (c: Variables) => string;
}

/** Every variable the gateway reads. */
export const KNOWN_VARIABLES: readonly string[] = Object.keys(schema.shape);

/**
 * Where /metrics is served: PORT (undefined) or a port of its own, by default 9464 in production
 * (Prometheus exporters' port), so that the public port never shows it; METRICS_PORT=same opts back in.
 */
export function metricsPortOf(c: Variables): number | undefined {
  if (c.METRICS_PORT === 'same') return undefined;
  return c.METRICS_PORT ?? (c.NODE_ENV === 'production' ? 9464 : undefined);
}

/**
 * SHUTDOWN_GRACE_MS unset: 5 s in production (a load balancer checking /readyz every second or two
 * sees two failures), 0 elsewhere, so a developer's Ctrl-C stops at once.
 */
export function shutdownGraceOf(c: Variables): number {
  return c.SHUTDOWN_GRACE_MS ?? (c.NODE_ENV === 'production' ? 5_000 : 0);
}
