import type { Redis } from 'ioredis';
import {
  type Attempt,
  type Held,
  IDEMPOTENCY_TTL_MS,
  type IdempotencyRecord,
  type IdempotencyStore,
  type PendingRecord,
  StoreFullError,
} from './idempotency-store.ts';

/**
 * The idempotency store of a fleet, in Redis (the contract: idempotency-store.ts). Every key has a
 * TTL, so memory stays bounded without evicting; Redis itself must not evict either
 * (`maxmemory-policy noeviction`, checked at start-up by warnIfRedisEvicts): a full Redis refuses
 * the claim, and the withdrawal is refused unsent.
 *
 * Per idempotency key: the record (JSON, 24 h) and its lease (`leaseMs`, judged by Redis's own
 * clock, so the replicas' clocks never have to agree), and the caller scope's index of its keys (a
 * sorted set scored by expiry) that bounds how many one scope may hold. Every step that decides
 * who may send is one Lua script, atomic in Redis. Keys of one caller scope share the hash tag
 * `{scope}`, a payout's attempts the tag `{payout}`, and each claimed intent is one key: every
 * script touches one slot, so they stay valid in a Redis Cluster.
 */

const PREFIX = 'mwg';
/** When Redis last lost its data, as a process of the fleet noticed it; absent: never. */
const SINCE_KEY = `${PREFIX}:registry-since`;

// KEYS: record, lease, scope index. ARGV: record JSON, ttl ms, lease ms, key, now ms, max keys, holder.
// Returns nil when claimed, 'full' at the scope's bound, else {record JSON, 1 if leased}.
const CLAIM = `
local current = redis.call('GET', KEYS[1])
if current then return {current, redis.call('EXISTS', KEYS[2])} end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[5])
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[6]) then return 'full' end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SET', KEYS[2], ARGV[7], 'PX', ARGV[3])
redis.call('ZADD', KEYS[3], tonumber(ARGV[5]) + tonumber(ARGV[2]), ARGV[4])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return nil`;

// KEYS: record, lease. ARGV: expected JSON, next JSON, ttl ms, lease ms, holder. Returns 1 when taken over.
const TAKE_OVER = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('SET', KEYS[2], ARGV[5], 'PX', ARGV[4])
return 1`;

// KEYS: record, lease. ARGV: record JSON, holder. Replaces the record while holder holds the lease.
const UPDATE = `
if redis.call('GET', KEYS[2]) ~= ARGV[2] or redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
return 1`;

// KEYS: record, lease, scope index. ARGV: holder, expected JSON, record JSON ('' forgets), ttl ms, key.
// Fenced: applies only while holder holds the lease, or nobody does and the record is expected.
const SETTLE = `
local lease = redis.call('GET', KEYS[2])
if lease ~= ARGV[1] and (lease or redis.call('GET', KEYS[1]) ~= ARGV[2]) then return 0 end
if ARGV[3] == '' then
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('ZREM', KEYS[3], ARGV[5])
else
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
  redis.call('DEL', KEYS[2])
end
return 1`;

export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly redis: Redis;
  private readonly maxKeysPerCaller: number;

  constructor(redis: Redis, bounds: { maxKeysPerCaller: number }) {
    this.redis = redis;
    this.maxKeysPerCaller = bounds.maxKeysPerCaller;
  }

  async claim(
    scope: string,
    key: string,
    record: PendingRecord,
    leaseMs: number,
    holder: string,
  ): Promise<Held | null> {
    const held = (await this.redis.eval(
      CLAIM,
      3,
      recordKey(scope, key),
      leaseKey(scope, key),
      indexKey(scope),
      JSON.stringify(record),
      IDEMPOTENCY_TTL_MS,
      leaseMs,
      key,
      Date.now(),
      this.maxKeysPerCaller,
      holder,
    )) as [string, number] | 'full' | null;
    if (held === 'full') throw new StoreFullError('caller');
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
    holder: string,
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
      holder,
    );
    return taken === 1;
  }

  async update(scope: string, key: string, record: PendingRecord, holder: string): Promise<boolean> {
    const updated = await this.redis.eval(
      UPDATE,
      2,
      recordKey(scope, key),
      leaseKey(scope, key),
      JSON.stringify(record),
      holder,
    );
    return updated === 1;
  }

  async settle(
    scope: string,
    key: string,
    holder: string,
    expected: PendingRecord,
    record: IdempotencyRecord | null,
  ): Promise<boolean> {
    const settled = await this.redis.eval(
      SETTLE,
      3,
      recordKey(scope, key),
      leaseKey(scope, key),
      indexKey(scope),
      holder,
      JSON.stringify(expected),
      record ? JSON.stringify(record) : '',
      IDEMPOTENCY_TTL_MS,
      key,
    );
    return settled === 1;
  }

  async putAttempt(payout: string, attempt: Attempt): Promise<void> {
    await this.redis
      .multi()
      .hset(attemptsKey(payout), attempt.id, JSON.stringify(attempt))
      .pexpire(attemptsKey(payout), IDEMPOTENCY_TTL_MS)
      .exec();
  }

  async removeAttempt(payout: string, attemptId: string): Promise<void> {
    await this.redis.hdel(attemptsKey(payout), attemptId);
  }

  async attempts(payout: string): Promise<Attempt[]> {
    const oldest = Date.now() - IDEMPOTENCY_TTL_MS;
    return (await this.redis.hvals(attemptsKey(payout)))
      .map((json) => JSON.parse(json) as Attempt)
      .filter((attempt) => attempt.sentAt > oldest);
  }

  async claimIntent(intentId: string, owner: string): Promise<string | null> {
    const set = await this.redis.set(ownerKey(intentId), owner, 'PX', IDEMPOTENCY_TTL_MS, 'NX');
    if (set === 'OK') return null;
    const current = await this.redis.get(ownerKey(intentId));
    return current === owner ? null : (current ?? null);
  }

  async intentOwners(intentIds: readonly string[]): Promise<Map<string, string>> {
    // One GET each: the keys live in different slots of a Cluster.
    const owners = await Promise.all(intentIds.map((intentId) => this.redis.get(ownerKey(intentId))));
    const found = new Map<string, string>();
    intentIds.forEach((intentId, i) => {
      const owner = owners[i];
      if (owner) found.set(intentId, owner);
    });
    return found;
  }

  async registrySince(): Promise<number> {
    const since = await this.redis.get(SINCE_KEY);
    return since === null ? Number.NEGATIVE_INFINITY : Number(since);
  }

  /**
   * Marks that Redis lost its data now (keepFleetScopeSecret found the fleet's secret gone):
   * claims and attempts written before are gone, and reconciliation will not vouch for intents
   * made before this.
   */
  async markDataLoss(): Promise<void> {
    await this.redis.set(SINCE_KEY, Date.now());
  }

  async ping(): Promise<boolean> {
    return (await this.redis.ping()) === 'PONG';
  }
}

// The scope is an HMAC and the payout a hash (base64url): neither contains the braces of a hash tag.
// An intent's owner key stands alone, so it needs no tag.
const recordKey = (scope: string, key: string) => `${PREFIX}:{${scope}}:idem:${key}`;
const leaseKey = (scope: string, key: string) => `${PREFIX}:{${scope}}:lease:${key}`;
const indexKey = (scope: string) => `${PREFIX}:{${scope}}:keys`;
const attemptsKey = (payout: string) => `${PREFIX}:{${payout}}:attempts`;
const ownerKey = (intentId: string) => `${PREFIX}:intent:${intentId}:owner`;
