import { type RedisClient, refreshSlots } from '../redis/connection.ts';
import type { RedisHealth } from '../redis/health.ts';
import {
  type Held,
  IDEMPOTENCY_TTL_MS,
  type IdempotencyRecord,
  type IdempotencyStore,
  NotAskedError,
  type PendingRecord,
  ReplicaAckError,
  StoreFullError,
  type Submission,
} from './idempotency-store.ts';
import { readKeyRecord, readSubmission } from './record-format.ts';

const PREFIX = 'mwg';
/** When Redis last lost its data, as a process of the fleet noticed it; absent: never. */
const SINCE_KEY = `${PREFIX}:registry-since`;

// KEYS: record, lease, scope index, scope refusals. ARGV: record JSON, ttl ms, lease ms, key, now ms,
// max keys, holder, the scope's record and lease key prefixes. Returns nil when claimed (this
// holder's earlier claim included), or the number of refusals forgotten to make room; 'full' when
// other records fill the scope's bound; else {record JSON, 1 if leased}. A refusals entry is a hint:
// only a record still refused and unleased is forgotten.
const CLAIM = `
local current = redis.call('GET', KEYS[1])
if current then
  local lease = redis.call('GET', KEYS[2])
  if lease == ARGV[7] then return nil end
  return {current, lease and 1 or 0}
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', ARGV[5])
local evicted = 0
while redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[6]) do
  local oldest = redis.call('ZRANGE', KEYS[4], 0, 0)[1]
  if not oldest then return 'full' end
  redis.call('ZREM', KEYS[4], oldest)
  local held = redis.call('GET', ARGV[8] .. oldest)
  if held and redis.call('EXISTS', ARGV[9] .. oldest) == 0 then
    local ok, record = pcall(cjson.decode, held)
    if ok and type(record) == 'table' and record.state == 'refused' then
      redis.call('DEL', ARGV[8] .. oldest)
      redis.call('ZREM', KEYS[3], oldest)
      evicted = evicted + 1
    end
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SET', KEYS[2], ARGV[7], 'PX', ARGV[3])
redis.call('ZADD', KEYS[3], tonumber(ARGV[5]) + tonumber(ARGV[2]), ARGV[4])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
if evicted > 0 then return evicted end
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

// KEYS: record, lease, scope index, scope refusals. ARGV: holder, expected JSON, record JSON ('' forgets),
// ttl ms, key, now ms, '1' when the record is a refusal (named in the refusals for CLAIM). Fenced:
// applies only while holder holds the lease, or nobody does and the record is expected.
const SETTLE = `
local lease = redis.call('GET', KEYS[2])
if lease ~= ARGV[1] and (lease or redis.call('GET', KEYS[1]) ~= ARGV[2]) then return 0 end
if ARGV[3] == '' then
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('ZREM', KEYS[3], ARGV[5])
  redis.call('ZREM', KEYS[4], ARGV[5])
else
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
  redis.call('DEL', KEYS[2])
  if ARGV[7] == '1' then
    redis.call('ZADD', KEYS[4], tonumber(ARGV[6]) + tonumber(ARGV[4]), ARGV[5])
    redis.call('PEXPIRE', KEYS[4], ARGV[4])
  end
end
return 1`;

// KEYS: the intent's owner. ARGV: owner, ttl ms. 1 when this owner holds it (claimed now, or by
// an earlier call whose answer was lost: its WAIT is then checked all the same), 0 when another does.
const CLAIM_INTENT = `
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then return 1 end
return 0`;

// KEYS: the payout's submissions. ARGV: submission id, submission JSON, ttl ms.
const PUT_ATTEMPT = `
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

export interface RedisStoreOptions {
  /** Idempotency keys one caller scope may hold (IDEMPOTENCY_MAX_KEYS_PER_CALLER). */
  maxKeysPerCaller: number;
  /** Replicas that must acknowledge the writes a POST depends on; 0: none asked. */
  minReplicaAcks?: number;
  /** How long Redis may wait for them (WAIT's timeout), inside the command bound. */
  ackTimeoutMs?: number;
  /** When given, commands are refused at once while Redis is known not to answer. */
  health?: RedisHealth;
  /** Told of each refused record forgotten to make room (the `evicted_refusal` metric). */
  onEvicted?: () => void;
}

/**
 * The idempotency store of a fleet, in Redis (the contract: idempotency-store.ts; the keys:
 * docs/upgrading.md; bounds: docs/withdrawals.md, Storage bounds). Every key has a TTL; Redis must
 * not evict (`maxmemory-policy noeviction`, warnIfRedisEvicts), so a full Redis refuses the claim.
 * Every step that decides who may send is one Lua script touching one hash slot (`{scope}` or
 * `{payout}`), so the scripts stay valid in a Redis Cluster; leases are judged by Redis's clock.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly connections: readonly RedisClient[];
  private turn = 0;
  private readonly maxKeysPerCaller: number;
  private readonly minReplicaAcks: number;
  private readonly ackTimeoutMs: number;
  private readonly health: RedisHealth | undefined;
  private readonly onEvicted: (() => void) | undefined;

  /**
   * `connections`: one, or several used in turn, so that a WAIT held by a slow replica does not
   * queue every other withdrawal's commands (a WAIT acknowledges every write made before it).
   */
  constructor(connections: RedisClient | readonly RedisClient[], options: RedisStoreOptions) {
    this.connections = Array.isArray(connections) ? connections : [connections as RedisClient];
    this.maxKeysPerCaller = options.maxKeysPerCaller;
    this.minReplicaAcks = options.minReplicaAcks ?? 0;
    this.ackTimeoutMs = options.ackTimeoutMs ?? 400;
    this.health = options.health;
    this.onEvicted = options.onEvicted;
  }

  /** The connection for the next command. */
  private get redis(): RedisClient {
    this.turn = (this.turn + 1) % this.connections.length;
    return this.connections[this.turn] as RedisClient;
  }

  /**
   * One command for a request, refused at once (NotAskedError) while the health knows Redis does
   * not answer. Its failures are not reported to the health: it may have waited behind a WAIT.
   */
  private async run<T>(command: () => Promise<T>): Promise<T> {
    if (this.health && !this.health.responsive) throw new NotAskedError('redis does not answer');
    return command();
  }

  /**
   * One script whose write must survive a failover: followed by a WAIT in one pipeline when
   * acknowledgements are asked for; ReplicaAckError when fewer replicas hold it.
   */
  private async acknowledged(script: string, keys: string[], args: (string | number)[]): Promise<unknown> {
    if (this.minReplicaAcks === 0) {
      return this.run(() => this.redis.eval(script, keys.length, ...keys, ...args));
    }
    const [written, acknowledged] = await this.run(async () => {
      const redis = this.redis;
      const replies = await redis
        .pipeline()
        .eval(script, keys.length, ...keys, ...args)
        .wait(this.minReplicaAcks, this.ackTimeoutMs)
        .exec();
      const [[writeError, written] = [], [waitError, acknowledged] = []] = replies ?? [];
      // ioredis does not follow a pipeline's MOVED: refused, slots read again for the next write.
      if (writeError && /^(MOVED|ASK|CLUSTERDOWN)/.test(writeError.message)) refreshSlots(redis);
      if (writeError) throw writeError;
      if (waitError) throw waitError;
      return [written, Number(acknowledged)] as const;
    });
    // Nothing written (not the holder, or already claimed): nothing to acknowledge.
    if (written !== 0 && acknowledged < this.minReplicaAcks) {
      throw new ReplicaAckError(acknowledged, this.minReplicaAcks);
    }
    return written;
  }

  async claim(
    scope: string,
    key: string,
    record: PendingRecord,
    leaseMs: number,
    holder: string,
  ): Promise<Held | null> {
    const held = (await this.run(() =>
      this.redis.eval(
        CLAIM,
        4,
        recordKey(scope, key),
        leaseKey(scope, key),
        indexKey(scope),
        refusalsKey(scope),
        JSON.stringify(record),
        IDEMPOTENCY_TTL_MS,
        leaseMs,
        key,
        Date.now(),
        this.maxKeysPerCaller,
        holder,
        recordKey(scope, ''),
        leaseKey(scope, ''),
      ),
    )) as [string, number] | 'full' | number | null;
    if (held === 'full') throw new StoreFullError('caller');
    if (typeof held === 'number') {
      for (let i = 0; i < held; i++) this.onEvicted?.();
      return null;
    }
    return held && { record: readKeyRecord(held[0]), leased: held[1] === 1 };
  }

  async read(scope: string, key: string): Promise<Held | null> {
    const [[, record], [, leased]] = (await this.run(() =>
      this.redis.multi().get(recordKey(scope, key)).exists(leaseKey(scope, key)).exec(),
    )) as [[null, string | null], [null, number]];
    return record === null ? null : { record: readKeyRecord(record), leased: leased === 1 };
  }

  async takeOver(
    scope: string,
    key: string,
    expected: PendingRecord,
    next: PendingRecord,
    leaseMs: number,
    holder: string,
  ): Promise<boolean> {
    const taken = await this.run(() =>
      this.redis.eval(
        TAKE_OVER,
        2,
        recordKey(scope, key),
        leaseKey(scope, key),
        JSON.stringify(expected),
        JSON.stringify(next),
        IDEMPOTENCY_TTL_MS,
        leaseMs,
        holder,
      ),
    );
    return taken === 1;
  }

  async update(scope: string, key: string, record: PendingRecord, holder: string): Promise<boolean> {
    // The record that names the submission about to be sent: it must survive a failover.
    const updated = await this.acknowledged(
      UPDATE,
      [recordKey(scope, key), leaseKey(scope, key)],
      [JSON.stringify(record), holder],
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
    const settled = await this.run(() =>
      this.redis.eval(
        SETTLE,
        4,
        recordKey(scope, key),
        leaseKey(scope, key),
        indexKey(scope),
        refusalsKey(scope),
        holder,
        JSON.stringify(expected),
        record ? JSON.stringify(record) : '',
        IDEMPOTENCY_TTL_MS,
        key,
        Date.now(),
        record?.state === 'refused' ? '1' : '0',
      ),
    );
    return settled === 1;
  }

  async putSubmission(payout: string, submission: Submission): Promise<void> {
    await this.acknowledged(
      PUT_ATTEMPT,
      [submissionsKey(payout)],
      [submission.id, JSON.stringify(submission), IDEMPOTENCY_TTL_MS],
    );
  }

  async removeSubmission(payout: string, submissionId: string): Promise<void> {
    await this.run(() => this.redis.hdel(submissionsKey(payout), submissionId));
  }

  async submissions(payout: string): Promise<Submission[]> {
    const oldest = Date.now() - IDEMPOTENCY_TTL_MS;
    return (await this.run(() => this.redis.hvals(submissionsKey(payout))))
      .map(readSubmission)
      .filter((submission) => submission.sentAt > oldest);
  }

  async claimIntent(intentId: string, owner: string): Promise<string | null> {
    // Acknowledged: a claim lost in a failover would leave the intent for another key to take.
    const set = await this.acknowledged(CLAIM_INTENT, [ownerKey(intentId)], [owner, IDEMPOTENCY_TTL_MS]);
    if (set === 1) return null;
    const current = await this.run(() => this.redis.get(ownerKey(intentId)));
    return current === owner ? null : (current ?? null);
  }

  async intentOwners(intentIds: readonly string[]): Promise<Map<string, string>> {
    // One GET each: the keys live in different slots of a Cluster.
    const owners = await Promise.all(
      intentIds.map((intentId) => this.run(() => this.redis.get(ownerKey(intentId)))),
    );
    const found = new Map<string, string>();
    intentIds.forEach((intentId, i) => {
      const owner = owners[i];
      if (owner) found.set(intentId, owner);
    });
    return found;
  }

  async registrySince(): Promise<number> {
    const since = await this.run(() => this.redis.get(SINCE_KEY));
    return since === null ? Number.NEGATIVE_INFINITY : Number(since);
  }

  /** Marks now as when Redis lost its data (its claims with it): R7 vouches for no older intent. */
  async markDataLoss(): Promise<void> {
    await this.redis.set(SINCE_KEY, Date.now());
  }

  /** Whether the store answers: what the health knows, without a command, when there is one. */
  async ping(): Promise<boolean> {
    if (this.health) return this.health.responsive;
    return (await this.redis.ping()) === 'PONG';
  }
}

// Scopes and payouts are base64url, so they never contain a hash tag's braces.
const recordKey = (scope: string, key: string) => `${PREFIX}:{${scope}}:idem:${key}`;
const leaseKey = (scope: string, key: string) => `${PREFIX}:{${scope}}:lease:${key}`;
const indexKey = (scope: string) => `${PREFIX}:{${scope}}:keys`;
/** The scope's refused keys, scored by expiry: which records CLAIM may forget (0.1.0 ignores it). */
const refusalsKey = (scope: string) => `${PREFIX}:{${scope}}:refused`;
// Stored as `:attempts`: the key name a mixed-release fleet shares (record-format.ts).
const submissionsKey = (payout: string) => `${PREFIX}:{${payout}}:attempts`;
const ownerKey = (intentId: string) => `${PREFIX}:intent:${intentId}:owner`;
