import type { RedisClient } from '../redis/connection.ts';
import type { RedisHealth } from '../redis/health.ts';

/** Who polls for a feed: the lease's holder, which renews it each tick; a dead holder's lease expires. */
export interface PollLeases {
  /** Takes or renews `name` for `owner` for `ttlMs`; false while another owner holds it. */
  hold(name: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Gives `name` up if `owner` holds it. */
  release(name: string, owner: string): Promise<void>;
}

/** One process: every poller is its feed's only one. */
export const processLeases: PollLeases = {
  hold: async () => true,
  release: async () => {},
};

const HOLD = `
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/**
 * Leases in Redis under `mwg:poll:<feed name>` (a caller scope, never a key). While `health` knows
 * Redis does not answer, `hold` fails at once: no replica can be sure to lead.
 */
export function redisLeases(redis: RedisClient, health?: RedisHealth): PollLeases {
  const run = <T>(command: () => Promise<T>) => (health ? health.run(command) : command());
  return {
    async hold(name, owner, ttlMs) {
      return (await run(() => redis.eval(HOLD, 1, `mwg:poll:${name}`, owner, String(ttlMs)))) === 1;
    },
    async release(name, owner) {
      await run(() => redis.eval(RELEASE, 1, `mwg:poll:${name}`, owner));
    },
  };
}
