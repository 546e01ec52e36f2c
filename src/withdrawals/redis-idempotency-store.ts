import type { Redis } from 'ioredis';
import {
  type Held,
  IDEMPOTENCY_TTL_MS,
  type IdempotencyRecord,
  type IdempotencyStore,
  type PendingRecord,
} from './idempotency-store.ts';

/**
 * The idempotency store of a fleet, in Redis. Per key, two Redis keys, both with a TTL, so memory
 * stays bounded: the record (JSON, 24 h) and its lease (`leaseMs`, judged by Redis's own clock, so
 * the replicas' clocks never have to agree). Every step that decides who may send is one Lua
 * script, atomic in Redis. Keys of one caller scope share the hash tag `{scope}`, so they live in
 * one slot of a Redis Cluster and the scripts stay valid there.
 */

const PREFIX = 'mwg';

// KEYS: record, lease. ARGV: record JSON, ttl ms, lease ms.
// Returns nil when claimed, else {record JSON, 1 if leased}.
const CLAIM = `
local current = redis.call('GET', KEYS[1])
if current then return {current, redis.call('EXISTS', KEYS[2])} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
return nil`;

// KEYS: record, lease. ARGV: expected JSON, next JSON, ttl ms, lease ms. Returns 1 when taken over.
const TAKE_OVER = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('SET', KEYS[2], '1', 'PX', ARGV[4])
return 1`;

export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly redis: Redis;

  constructor(redis: Redis) {
    this.redis = redis;
  }

  async claim(scope: string, key: string, record: PendingRecord, leaseMs: number): Promise<Held | null> {
    const held = (await this.redis.eval(
      CLAIM,
      2,
      recordKey(scope, key),
      leaseKey(scope, key),
      JSON.stringify(record),
      IDEMPOTENCY_TTL_MS,
      leaseMs,
    )) as [string, number] | null;
    return held && { record: JSON.parse(held[0]) as IdempotencyRecord, leased: held[1] === 1 };
  }

  async read(scope: string, key: string): Promise<Held | null> {
    const [[, record], [, leased]] = (await this.redis
      .multi()
      .get(recordKey(scope, key))
      .exists(leaseKey(scope, key))
      .exec()) as [[null, string | null], [null, number]];
    return record === null ? null : { record: JSON.parse(record) as IdempotencyRecord, leased: leased === 1 };
  }

  async takeOver(
    scope: string,
    key: string,
    expected: PendingRecord,
    next: PendingRecord,
    leaseMs: number,
  ): Promise<boolean> {
    const taken = await this.redis.eval(
      TAKE_OVER,
      2,
      recordKey(scope, key),
      leaseKey(scope, key),
      JSON.stringify(expected),
      JSON.stringify(next),
      IDEMPOTENCY_TTL_MS,
      leaseMs,
    );
    return taken === 1;
  }

  async save(scope: string, key: string, record: IdempotencyRecord): Promise<void> {
    const multi = this.redis
      .multi()
      .set(recordKey(scope, key), JSON.stringify(record), 'PX', IDEMPOTENCY_TTL_MS)
      .del(leaseKey(scope, key));
    if (record.state === 'succeeded')
      multi.set(intentKey(scope, record.intent.id), '1', 'PX', IDEMPOTENCY_TTL_MS);
    await multi.exec();
  }

  async isClaimedIntent(scope: string, intentId: string): Promise<boolean> {
    return (await this.redis.exists(intentKey(scope, intentId))) === 1;
  }

  async ping(): Promise<boolean> {
    return (await this.redis.ping()) === 'PONG';
  }
}

// The scope is an HMAC (base64url): it never contains the braces of a hash tag.
const recordKey = (scope: string, key: string) => `${PREFIX}:{${scope}}:idem:${key}`;
const leaseKey = (scope: string, key: string) => `${PREFIX}:{${scope}}:lease:${key}`;
const intentKey = (scope: string, intentId: string) => `${PREFIX}:{${scope}}:intent:${intentId}`;
