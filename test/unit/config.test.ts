import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, KNOWN_VARIABLES, OWNED_PREFIXES, parseConfig } from '../../src/config/config.ts';
import { RULES } from '../../src/config/rules.ts';
import { redisAddress, storeDescription } from '../../src/redis/connection.ts';

/** The problems parseConfig lists for `env`; none when it parses. */
function problemsOf(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
}

describe('configuration', () => {
  it('has working defaults: embedded sandbox, GraphiQL on outside production', () => {
    const config = parseConfig({});
    expect(config).toMatchObject({ port: 4000, host: '127.0.0.1', upstreamURL: undefined, graphiql: true });
    expect(config.upstream.headersTimeoutMs).toBe(10_000);
    expect(config.queryDeduplication).toBe(true);
    // The REST API is protected out of the box: breakers on, a call budget per request.
    expect(config.upstream.circuitBreaker).toEqual({ failures: 5, halfOpenAfterMs: 10_000 });
    expect(config.maxUpstreamCallsPerRequest).toBe(100);
    expect(parseConfig({ CIRCUIT_BREAKER_FAILURES: '0' }).upstream.circuitBreaker.failures).toBe(0);
    // No inbound limit unless asked; "<n>/<s|m|h>" when asked.
    expect(config.rateLimitPerKey).toBeUndefined();
    expect(parseConfig({ RATE_LIMIT_PER_KEY: '100/s' }).rateLimitPerKey).toEqual({
      points: 100,
      durationSeconds: 1,
    });
    expect(parseConfig({ RATE_LIMIT_PER_KEY: '600/m' }).rateLimitPerKey).toEqual({
      points: 600,
      durationSeconds: 60,
    });
    expect(() => parseConfig({ RATE_LIMIT_PER_KEY: 'lots' })).toThrow(
      /RATE_LIMIT_PER_KEY: must be <requests>\/<s\|m\|h>/,
    );
    // More than one process without a shared store would weaken the guarantees silently: refused.
    expect(config.workers).toBe(1);
    // The embedded sandbox demos on its own: a step every 8 s per item, a new deposit every 25 s.
    expect(config.sandbox).toEqual({
      port: 0,
      adminToken: undefined,
      autoAdvanceMs: 8_000,
      depositEveryMs: 25_000,
    });
    expect(() => parseConfig({ WORKERS: '2' })).toThrow(/WORKERS: 2 processes need a Redis/);
    // A subgraph serves a router's query plans: trusted documents are the router's to enforce.
    expect(parseConfig({ FEDERATION: 'true' }).federation).toBe(true);
    expect(parseConfig({}).federation).toBe(false);
    expect(() =>
      parseConfig({ FEDERATION: 'true', PERSISTED_DOCUMENTS: 'x.json', PERSISTED_DOCUMENTS_MODE: 'enforce' }),
    ).toThrow(/FEDERATION: a subgraph cannot enforce the apps' trusted documents/);
    expect(parseConfig({ WORKERS: '2', REDIS_URL: 'redis://127.0.0.1:6379' }).workers).toBe(2);
    expect(() => parseConfig({ IDEMPOTENCY_LEASE_MS: '1000' })).toThrow(
      /IDEMPOTENCY_LEASE_MS: must be longer than REQUEST_DEADLINE_MS/,
    );
    expect(parseConfig({ QUERY_DEDUPLICATION: 'false' }).queryDeduplication).toBe(false);
    // A connection that sends nothing or part of a request is closed within 30 s by default.
    expect(config.edge).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      sendTimeoutMs: 30_000,
      maxConnections: 10_000,
      maxWebSockets: 5_000,
      webSocketsPerKey: 20,
      webSocketIdleMs: 60_000,
    });
    // What an outsider can make the gateway keep or hold is bounded by default, and tunable.
    expect(config.edge.webSocketsUnproven).toBeUndefined(); // 5 % of MAX_WEBSOCKETS (websocket.ts)
    expect(parseConfig({ WEBSOCKETS_UNPROVEN: '10' }).edge.webSocketsUnproven).toBe(10);
    expect(config.upstream.refusedKeyTtlMs).toBe(30_000);
    // One key's expensive requests take turns: two calls past each request's first five, at 10 a
    // second, and two walks.
    expect([config.upstream.fairShare, config.queryLimits.walksPerKey]).toEqual([
      { callsPerKey: 2, callsPerSecond: 10 },
      2,
    ]);
    expect(parseConfig({ UPSTREAM_CALLS_PER_KEY: '0', QUERY_WALKS_PER_KEY: '0' })).toMatchObject({
      upstream: { fairShare: { callsPerKey: 0 } },
      queryLimits: { walksPerKey: 0 },
    });
    expect(parseConfig({ REFUSED_KEY_TTL_MS: '0' }).upstream.refusedKeyTtlMs).toBe(0);
    expect([config.documentCacheMaxBytes, config.apqMaxBytes]).toEqual([32 * 1024 * 1024, 16 * 1024 * 1024]);
    expect(parseConfig({ DOCUMENT_CACHE_MAX_BYTES: '0', APQ_MAX_BYTES: '0' })).toMatchObject({
      documentCacheMaxBytes: 0,
      apqMaxBytes: 0,
    });
    expect(() => parseConfig({ DOCUMENT_CACHE_MAX_BYTE: '1' })).toThrow(
      /did you mean DOCUMENT_CACHE_MAX_BYTES/,
    );
    expect(() => parseConfig({ HEADERS_TIMEOUT_MS: '40000' })).toThrow(
      /HEADERS_TIMEOUT_MS: must be at most REQUEST_TIMEOUT_MS/,
    );
    const upstream = { UPSTREAM_URL: 'https://api.example.com' };
    expect(parseConfig({ NODE_ENV: 'production', ...upstream }).graphiql).toBe(false);
    expect(parseConfig({ NODE_ENV: 'production', GRAPHIQL: 'true', ...upstream }).graphiql).toBe(true);
    expect(() => parseConfig({ NODE_ENV: 'production' })).toThrow(
      /UPSTREAM_URL: required when NODE_ENV=production/,
    );
  });

  it('lists every problem at once', () => {
    try {
      parseConfig({ PORT: 'eighty', UPSTREAM_URL: 'ftp://x', UPSTREAM_RETRIES: '99', GRAPHIQL: 'maybe' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems;
      expect(problems).toHaveLength(4);
      expect(problems.map((p) => p.split(':')[0]).sort()).toEqual([
        'GRAPHIQL',
        'PORT',
        'UPSTREAM_RETRIES',
        'UPSTREAM_URL',
      ]);
    }
  });

  it('lists every problem between variables at once, a bad manifest included', () => {
    let problems: string[] = [];
    try {
      parseConfig({
        NODE_ENV: 'production',
        WORKERS: '2',
        IDEMPOTENCY_LEASE_MS: '1000',
        SUBSCRIPTION_POLL_MS: '500',
        SUBSCRIPTION_POLL_MAX_MS: '100',
        HEADERS_TIMEOUT_MS: '40000',
        PERSISTED_DOCUMENTS: '/nonexistent/manifest.json',
      });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      problems = (error as ConfigError).problems;
    }
    expect(problems.map((p) => p.split(':')[0])).toEqual([
      'WORKERS',
      'IDEMPOTENCY_LEASE_MS',
      'SUBSCRIPTION_POLL_MAX_MS',
      'HEADERS_TIMEOUT_MS',
      'UPSTREAM_URL',
      'PERSISTED_DOCUMENTS',
    ]);
    expect(problems.at(-1)).toMatch(/\/nonexistent\/manifest\.json: ENOENT/);
  });

  it('lists the problems between variables in the same go as the bad values, skipping checks a bad value is part of', () => {
    let problems: string[] = [];
    try {
      parseConfig({
        PORT: 'abc',
        METRICS_PORT: '4000',
        PERSISTED_DOCUMENTS_MODE: 'enforce',
        RATE_LIMIT_PER_KEY: 'lots',
        NODE_ENV: 'production',
        REDIS_TIMEOUT_MS: '-5',
        WORKERS: '2',
      });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      problems = (error as ConfigError).problems;
    }
    expect(problems).toEqual([
      'PORT: must be an integer from 0 to 65535',
      expect.stringMatching(/^RATE_LIMIT_PER_KEY: must be <requests>\/<s\|m\|h>/),
      'REDIS_TIMEOUT_MS: must be an integer from 10 to 60000',
      expect.stringMatching(/^WORKERS: 2 processes need a Redis/),
      expect.stringMatching(/^PERSISTED_DOCUMENTS_MODE: enforce needs PERSISTED_DOCUMENTS/),
      expect.stringMatching(/^UPSTREAM_URL: required when NODE_ENV=production/),
    ]);
  });

  describe('a variable the gateway does not read, under a prefix it owns', () => {
    it('is refused with the closest known name, listed first among every other problem', () => {
      expect(
        problemsOf({
          REDIS_ULR: 'redis://10.0.0.1:6379',
          RATE_LIMIT_PER_KY: '2/s',
          UPSTREAM_ULR: 'https://api.example.com',
          SUBSCRIPTION_POLL_MAXMS: '100',
          PORT: 'abc',
        }),
      ).toEqual([
        'REDIS_ULR is not a variable the gateway reads; did you mean REDIS_URL?',
        'RATE_LIMIT_PER_KY is not a variable the gateway reads; did you mean RATE_LIMIT_PER_KEY?',
        'UPSTREAM_ULR is not a variable the gateway reads; did you mean UPSTREAM_URL?',
        'SUBSCRIPTION_POLL_MAXMS is not a variable the gateway reads; did you mean SUBSCRIPTION_POLL_MAX_MS?',
        'PORT: must be an integer from 0 to 65535',
      ]);
      // With nothing else wrong it still stops the start.
      expect(problemsOf({ METRICS_PROT: '9465' })).toEqual([
        'METRICS_PROT is not a variable the gateway reads; did you mean METRICS_PORT?',
      ]);
      // Set but empty counts as unset, as for every variable.
      expect(problemsOf({ REDIS_ULR: '' })).toEqual([]);
    });

    it('covers every variable of the gateway but those whose prefix other software shares', () => {
      const outside = KNOWN_VARIABLES.filter((name) => !OWNED_PREFIXES.some((p) => name.startsWith(p)));
      expect(outside.filter((name) => !name.startsWith('OTEL_'))).toEqual(['NODE_ENV', 'PORT', 'HOST']);
      // Each prefix is one the gateway's own variables use.
      for (const prefix of OWNED_PREFIXES) {
        expect(KNOWN_VARIABLES.some((name) => name.startsWith(prefix))).toBe(true);
      }
    });

    it('leaves alone what Node, npm, OpenTelemetry, the image, Kubernetes and Heroku set', () => {
      expect(
        problemsOf({
          NODE_OPTIONS: '--max-old-space-size=200',
          NODE_VERSION: '24.11.0',
          NODE_EXTRA_CA_CERTS: '/etc/ssl/ca.pem',
          YARN_VERSION: '1.22.22',
          npm_config_cache: '/tmp/npm',
          npm_lifecycle_event: 'start',
          OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc',
          OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod',
          HOSTNAME: 'gateway-7d9f',
          KUBERNETES_SERVICE_HOST: '10.96.0.1',
          // A Service named redis, and one named upstream-api, in the pod's namespace.
          REDIS_SERVICE_HOST: '10.96.0.7',
          REDIS_SERVICE_PORT: '6379',
          REDIS_SERVICE_PORT_REDIS: '6379',
          REDIS_PORT: 'tcp://10.96.0.7:6379',
          REDIS_PORT_6379_TCP: 'tcp://10.96.0.7:6379',
          REDIS_PORT_6379_TCP_PROTO: 'tcp',
          REDIS_PORT_6379_TCP_PORT: '6379',
          REDIS_PORT_6379_TCP_ADDR: '10.96.0.7',
          UPSTREAM_API_SERVICE_HOST: '10.96.0.9',
          REDIS_TLS_URL: 'rediss://h:p@ec2.example.com:6380',
        }),
      ).toEqual([]);
      // REDIS_PORT that is not a service link is someone's idea of a setting: refused.
      expect(problemsOf({ REDIS_PORT: '6379' })).toEqual([
        expect.stringMatching(/^REDIS_PORT is not a variable the gateway reads; did you mean REDIS_/),
      ]);
    });
  });

  it('SHUTDOWN_GRACE_MS: 5 s in production, 0 elsewhere, as set when set', () => {
    expect(parseConfig({}).shutdownGraceMs).toBe(0);
    const production = { NODE_ENV: 'production', UPSTREAM_URL: 'https://api.example.com' };
    expect(parseConfig(production).shutdownGraceMs).toBe(5_000);
    expect(parseConfig({ ...production, SHUTDOWN_GRACE_MS: '0' }).shutdownGraceMs).toBe(0);
    expect(parseConfig({ SHUTDOWN_GRACE_MS: '12000' }).shutdownGraceMs).toBe(12_000);
    expect(() => parseConfig({ SHUTDOWN_GRACE_MS: '-1' })).toThrow(
      /SHUTDOWN_GRACE_MS: must be an integer from 0 to 300000/,
    );
  });

  describe('Redis, named by exactly one of three variables', () => {
    it('REDIS_URL: one server, no replica acknowledgements, a 500 ms bound', () => {
      expect(parseConfig({ REDIS_URL: 'redis://10.0.0.1:6379' }).redis).toEqual({
        topology: { kind: 'single', url: 'redis://10.0.0.1:6379' },
        timeoutMs: 500,
        minReplicaAcks: 0,
      });
      expect(parseConfig({}).redis).toBeUndefined();
    });

    it('REDIS_SENTINELS with REDIS_SENTINEL_MASTER: one acknowledgement by default', () => {
      const config = parseConfig({
        REDIS_SENTINELS: 's1.internal:26379,10.0.0.2:26380',
        REDIS_SENTINEL_MASTER: 'payments',
        REDIS_PASSWORD: 'secret',
        REDIS_SENTINEL_PASSWORD: 'other',
        REDIS_TIMEOUT_MS: '300',
      });
      expect(config.redis).toEqual({
        topology: {
          kind: 'sentinel',
          sentinels: [
            { host: 's1.internal', port: 26379 },
            { host: '10.0.0.2', port: 26380 },
          ],
          master: 'payments',
          sentinelPassword: 'other',
          username: undefined,
          password: 'secret',
        },
        timeoutMs: 300,
        minReplicaAcks: 1,
      });
    });

    it('REDIS_CLUSTER_NODES: one acknowledgement by default, 0 when asked', () => {
      const nodes = { REDIS_CLUSTER_NODES: '10.0.0.1:7000,10.0.0.2:7000' };
      expect(parseConfig(nodes).redis?.minReplicaAcks).toBe(1);
      expect(parseConfig(nodes).redis?.topology).toMatchObject({
        kind: 'cluster',
        nodes: [{ port: 7000 }, {}],
      });
      expect(parseConfig({ ...nodes, REDIS_MIN_REPLICA_ACKS: '0' }).redis?.minReplicaAcks).toBe(0);
      expect(parseConfig({ ...nodes, WORKERS: '2' }).workers).toBe(2);
    });

    it('is named by the start-up log and /readyz: the topology, and for the log the addresses without credentials', () => {
      const described = (env: Record<string, string>) => {
        const { redis } = parseConfig(env);
        return { store: storeDescription(redis), address: redis && redisAddress(redis) };
      };
      expect(described({})).toEqual({
        store:
          'in process (this process only: a fleet needs REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES)',
        address: undefined,
      });
      expect(described({ REDIS_URL: 'rediss://gateway:s3cret@redis.internal:6380/2' })).toEqual({
        store: 'redis (one server)',
        address: 'rediss://redis.internal:6380/2',
      });
      expect(
        described({
          REDIS_SENTINELS: '10.0.0.1:26379,[fd00::1]:26379',
          REDIS_SENTINEL_MASTER: 'payments',
          REDIS_PASSWORD: 's3cret',
        }),
      ).toEqual({ store: 'redis (sentinel)', address: 'payments via 10.0.0.1:26379,[fd00::1]:26379' });
      expect(
        described({ REDIS_CLUSTER_NODES: '10.0.0.1:7000,10.0.0.2:7000', REDIS_PASSWORD: 's3cret' }),
      ).toEqual({
        store: 'redis (cluster)',
        address: '10.0.0.1:7000,10.0.0.2:7000',
      });
    });

    it('refuses more than one topology, and every misplaced variable, all listed at once', () => {
      let problems: string[] = [];
      try {
        parseConfig({
          REDIS_URL: 'redis://10.0.0.1:6379',
          REDIS_CLUSTER_NODES: '10.0.0.1:7000',
          REDIS_SENTINEL_MASTER: 'mw',
          REDIS_PASSWORD: 'x',
        });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        problems = (error as ConfigError).problems;
      }
      expect(problems).toEqual([
        expect.stringMatching(/^REDIS_URL, REDIS_CLUSTER_NODES: set exactly one/),
        expect.stringMatching(/^REDIS_SENTINEL_MASTER: only means something with REDIS_SENTINELS/),
        expect.stringMatching(/^REDIS_PASSWORD: with REDIS_URL, credentials go in the URL/),
      ]);
      expect(() => parseConfig({ REDIS_SENTINELS: '10.0.0.1:26379' })).toThrow(
        /REDIS_SENTINEL_MASTER: required with REDIS_SENTINELS/,
      );
      expect(() => parseConfig({ REDIS_SENTINELS: '10.0.0.1' })).toThrow(
        /REDIS_SENTINELS: must be host:port/,
      );
      expect(() => parseConfig({ REDIS_MIN_REPLICA_ACKS: '1' })).toThrow(
        /REDIS_MIN_REPLICA_ACKS: only means something with a Redis/,
      );
      expect(() => parseConfig({ REDIS_URL: 'redis://x:1', REDIS_TIMEOUT_MS: '5000' })).toThrow(
        /REDIS_TIMEOUT_MS: 5000 must be at most a quarter of REQUEST_DEADLINE_MS/,
      );
    });
  });

  describe('the rules between variables (config/rules.ts)', () => {
    it('are one table, each rule naming the variables it compares', () => {
      expect(RULES.length).toBeGreaterThanOrEqual(15);
      for (const rule of RULES) {
        for (const name of rule.reads ?? []) expect(KNOWN_VARIABLES).toContain(name);
      }
    });

    it("skip a rule when a variable it compares is invalid: that value's own problem is listed instead", () => {
      // The lease's default (20 s) is not longer than this deadline, but the lease as set is not a number.
      expect(problemsOf({ IDEMPOTENCY_LEASE_MS: 'soon', REQUEST_DEADLINE_MS: '30000' })).toEqual([
        'IDEMPOTENCY_LEASE_MS: must be an integer from 100 to 3600000',
      ]);
      expect(problemsOf({ REQUEST_DEADLINE_MS: '30000' })).toEqual([
        'IDEMPOTENCY_LEASE_MS: must be longer than REQUEST_DEADLINE_MS (30000), so that no attempt can take over a key whose POST may still be in flight',
      ]);
    });
  });
});

describe('docs/configuration.md', () => {
  const page = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  /** Names in backticks, with `A_(B_)C` read as both A_C and A_B_C. */
  const named = new Set(
    [...page.matchAll(/`([A-Z][A-Z0-9_()]*[A-Z0-9])`/g)].flatMap((m) => {
      const name = m[1] as string;
      const optional = /^(.*)\((\w+)\)(.*)$/.exec(name);
      return optional
        ? [`${optional[1]}${optional[3]}`, `${optional[1]}${optional[2]}${optional[3]}`]
        : [name];
    }),
  );
  const rowNames = [...page.matchAll(/^\| ([^|]+)\|/gm)].flatMap((m) =>
    [...(m[1] as string).matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((n) => n[1] as string),
  );

  it('names every variable the gateway reads', () => {
    expect(KNOWN_VARIABLES.filter((name) => !named.has(name))).toEqual([]);
  });

  it('has a row only for variables the gateway reads', () => {
    expect(rowNames.length).toBeGreaterThan(50);
    expect(rowNames.filter((name) => !KNOWN_VARIABLES.includes(name))).toEqual([]);
  });
});
