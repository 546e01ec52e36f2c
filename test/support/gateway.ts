import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import type { Logger } from 'pino';
import { type Config, parseConfig } from '../../src/config/config.ts';
import type { GatewayMetrics } from '../../src/observability/metrics.ts';
import type { RedisClient } from '../../src/redis/connection.ts';
import { createGatewayRuntime, type PrebuiltParts } from '../../src/runtime.ts';
import { SandboxStore } from '../../src/sandbox/store/store.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { processLeases } from '../../src/subscriptions/leases.ts';
import { type LiveOptions, LivePolling } from '../../src/subscriptions/live.ts';
import { createCallers } from '../../src/upstream/callers.ts';
import type { MerchantWalletClient } from '../../src/upstream/client.ts';
import type { GraphiQLDefaults } from '../../src/yoga.ts';
import { startTestSandbox } from './sandbox.ts';
import { recordSuiteKey, suiteLogDestination } from './suite-logs.ts';

export interface GraphQLResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are asserted structurally
  body: { data?: T | null; errors?: any[]; [key: string]: unknown };
}

/** The configuration's defaults (src/config/config.ts), as tests start from them. */
export const DEFAULTS = parseConfig({});

/**
 * Settings to change from the defaults; an object setting (`subscriptions`, `upstream`, …) is
 * merged with its default, so `{ subscriptions: { pollMs: 20 } }` keeps the other limits.
 */
export type ConfigChanges = {
  [K in keyof Config]?: NonNullable<Config[K]> extends ReadonlyMap<unknown, unknown> | unknown[]
    ? Config[K]
    : NonNullable<Config[K]> extends object
      ? Partial<NonNullable<Config[K]>> | Extract<Config[K], null | undefined>
      : Config[K];
};

/** The defaults with `changes`; what createGatewayRuntime gets in a test. */
export function testConfig(changes: ConfigChanges = {}, base: Config = DEFAULTS): Config {
  const config: Record<string, unknown> = { ...base };
  for (const [name, value] of Object.entries(changes)) {
    const current = config[name];
    config[name] =
      value && current && typeof value === 'object' && typeof current === 'object' && !(value instanceof Map)
        ? { ...current, ...value }
        : value;
  }
  return config as unknown as Config;
}

/** Subscriptions' pollers in one process, with `config`'s settings unless overridden. */
export function livePolling(
  client: MerchantWalletClient,
  logger: Logger,
  overrides: Partial<LiveOptions> = {},
  config: Config = DEFAULTS,
): LivePolling {
  return new LivePolling({
    client,
    logger,
    events: new EventTarget(),
    leases: processLeases,
    ...config.subscriptions,
    callers: createCallers(client, config),
    metrics: null,
    ...overrides,
  });
}

/**
 * A gateway (through `yoga.fetch`, no socket) in front of a real sandbox on port 0, with helpers
 * to run operations as a merchant and to count the upstream calls they made. It is started by
 * createGatewayRuntime, as src/main.ts starts it.
 */
export async function startTestGateway(
  options: {
    store?: SandboxStore;
    /** Settings to change from the defaults (see ConfigChanges). */
    config?: ConfigChanges;
    upstream?: Partial<Config['upstream']>;
    clock?: () => number;
    /**
     * Parts built by the test (a recording idempotency store, a tracer, its own metrics…), GraphiQL's
     * first screen, and the fleet's Redis (connected by the test; `config.redis` says its bound).
     */
    infrastructure?: PrebuiltParts & { graphiql?: GraphiQLDefaults; redis?: RedisClient };
  } = {},
) {
  const sandbox = await startTestSandbox(options.store ?? new SandboxStore());
  const config = testConfig({
    ...options.config,
    upstream: {
      retryBaseDelayMs: 1,
      // Fault tests fail the same routes again and again; the breaker has its own tests.
      circuitBreaker: { ...DEFAULTS.upstream.circuitBreaker, failures: 0 },
      // Tests change the sandbox between reads; the micro-cache has its own tests with TTL on.
      cacheTtlMs: 0,
      ...options.config?.upstream,
      ...options.upstream,
    },
  });
  const logs: string[] = [];
  const logger = createLogger('debug', suiteLogDestination(logs));
  const runtime = await createGatewayRuntime(config, {
    logger,
    upstreamURL: sandbox.url,
    // Metrics on, as in production by default: every test exercises their counting.
    processMetrics: false,
    graphiql: { defaultQuery: '{ __typename }' },
    ...(options.clock && { clock: options.clock }),
    ...options.infrastructure,
  });
  const { gateway, client, live } = runtime;
  const metrics = runtime.metrics as GatewayMetrics;

  async function request(
    query: string,
    variables: Record<string, unknown> = {},
    options: { key?: string | null; headers?: Record<string, string>; path?: string } = {},
  ): Promise<GraphQLResponse> {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
    if (options.key) {
      recordSuiteKey(options.key);
      headers.authorization = `Bearer ${options.key}`;
    }
    const response = await gateway.fetch(`http://gateway.test${options.path ?? '/graphql'}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, headers: response.headers, body: await response.json() };
  }

  /** Runs a typed document (from test/generated) as the merchant owning `key`. */
  async function run<R, V>(
    document: TypedDocumentNode<R, V>,
    variables: V,
    key: string | null,
  ): Promise<GraphQLResponse<R>> {
    return request(print(document), variables as Record<string, unknown>, { key }) as Promise<
      GraphQLResponse<R>
    >;
  }

  /** Upstream calls seen by the sandbox since the last reset, as "METHOD path". */
  function upstreamCalls(): string[] {
    return sandbox.sandbox.requests.map((r) => `${r.method} ${r.path}`);
  }

  function resetCalls(): void {
    sandbox.sandbox.requests.length = 0;
  }

  return {
    sandbox,
    client,
    gateway,
    live,
    metrics,
    logs,
    request,
    run,
    upstreamCalls,
    resetCalls,
    runtime,
    async close() {
      await runtime[Symbol.asyncDispose]();
      await sandbox.close();
    },
  };
}

export type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;
