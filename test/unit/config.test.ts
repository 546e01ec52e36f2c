import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.ts';

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
    expect(() => parseConfig({ WORKERS: '2' })).toThrow(/WORKERS: 2 processes need REDIS_URL/);
    expect(parseConfig({ WORKERS: '2', REDIS_URL: 'redis://127.0.0.1:6379' }).workers).toBe(2);
    expect(() => parseConfig({ IDEMPOTENCY_LEASE_MS: '1000' })).toThrow(
      /IDEMPOTENCY_LEASE_MS: must be longer than REQUEST_DEADLINE_MS/,
    );
    expect(parseConfig({ QUERY_DEDUPLICATION: 'false' }).queryDeduplication).toBe(false);
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
});
