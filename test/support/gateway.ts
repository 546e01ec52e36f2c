import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { parseConfig } from '../../src/config.ts';
import { GatewayMetrics } from '../../src/observability/metrics.ts';
import { SandboxStore } from '../../src/sandbox/store/store.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { processLeases } from '../../src/subscriptions/leases.ts';
import { type LiveOptions, LivePolling, liveSettings } from '../../src/subscriptions/live.ts';
import { MerchantWalletClient, type UpstreamClientOptions } from '../../src/upstream/client.ts';
import { MemoryIdempotencyStore } from '../../src/withdrawals/idempotency-store.ts';
import { createGateway, type GatewayDeps, gatewaySettings } from '../../src/yoga.ts';
import { startTestSandbox } from './sandbox.ts';
import { recordSuiteKey, suiteLogDestination } from './suite-logs.ts';

export interface GraphQLResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are asserted structurally
  body: { data?: T | null; errors?: any[]; [key: string]: unknown };
}

/** The configuration's defaults (src/config.ts), as tests start from them. */
export const DEFAULTS = parseConfig({});

/** createGateway's settings at their defaults, for a gateway in front of `client`. */
export function defaultGatewayDeps(client: MerchantWalletClient, logger: GatewayDeps['logger']): GatewayDeps {
  return {
    client,
    logger,
    live: livePolling(client, logger),
    idempotencyStore: new MemoryIdempotencyStore({
      maxKeys: DEFAULTS.idempotencyMaxKeys,
      maxKeysPerCaller: DEFAULTS.idempotencyMaxKeysPerCaller,
    }),
    graphiql: false,
    ...gatewaySettings(DEFAULTS),
    rateLimiter: null,
    metrics: null,
    metricsEndpoint: null,
    tracer: null,
    trustedDocuments: { mode: 'off', manifest: new Map() },
  };
}

/** Subscriptions' pollers in one process, at the configuration's defaults unless overridden. */
export function livePolling(
  client: MerchantWalletClient,
  logger: GatewayDeps['logger'],
  overrides: Partial<LiveOptions> = {},
): LivePolling {
  return new LivePolling({
    client,
    logger,
    events: new EventTarget(),
    leases: processLeases,
    ...liveSettings(DEFAULTS),
    metrics: null,
    ...overrides,
  });
}

/**
 * A gateway (through `yoga.fetch`, no socket) in front of a real sandbox on port 0, with helpers
 * to run operations as a merchant and to count the upstream calls they made.
 */
export async function startTestGateway(
  options: {
    store?: SandboxStore;
    upstream?: Partial<UpstreamClientOptions>;
    clock?: () => number;
    gateway?: Partial<Omit<GatewayDeps, 'client' | 'logger'>>;
    /** Subscriptions' pollers: the defaults, with these settings. */
    live?: Partial<LiveOptions>;
  } = {},
) {
  const sandbox = await startTestSandbox(options.store ?? new SandboxStore());
  // Metrics on, as in production by default: every test exercises their counting.
  const metrics = new GatewayMetrics({
    maxOperationNames: DEFAULTS.metrics?.maxOperationNames ?? 100,
    processMetrics: false,
  });
  const client = new MerchantWalletClient(
    {
      ...DEFAULTS.upstream,
      retryBaseDelayMs: 1,
      // Fault tests fail the same routes again and again; the breaker has its own tests.
      circuitBreaker: { ...DEFAULTS.upstream.circuitBreaker, failures: 0 },
      // Tests change the sandbox between reads; the micro-cache has its own tests with TTL on.
      cacheTtlMs: 0,
      telemetry: { observer: metrics },
      ...options.upstream,
      baseURL: sandbox.url,
    },
    options.clock,
  );
  metrics.watchCircuits(() => client.circuits());
  const logs: string[] = [];
  const logger = createLogger('debug', suiteLogDestination(logs));
  const live = livePolling(client, logger, { metrics, ...options.live });
  const gateway = createGateway({
    ...defaultGatewayDeps(client, logger),
    graphiql: { defaultQuery: '{ __typename }' },
    metrics,
    metricsEndpoint: metrics.scrape,
    live,
    ...options.gateway,
  });

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
    async close() {
      live.close();
      await client.close();
      await sandbox.close();
    },
  };
}

export type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;
