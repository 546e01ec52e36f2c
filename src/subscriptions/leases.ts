import type { RedisClient } from '../redis/connection.ts';
import type { RedisHealth } from '../redis/health.ts';

/**
 * Who polls for a feed. In one process the poller alone does; in a fleet (REDIS_URL) the one
 * replica holding the feed's lease polls and publishes, and the others only relay what Redis
 * brings them. A lease that is not renewed (its holder died) expires, and the next replica whose
 * poller ticks takes it over.
 */
export interface PollLeases {
  /** Takes or renews `name` for `owner` for `ttlMs`; false while another owner holds it. */
  hold(name: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Gives `name` up if `owner` holds it, so another replica's poller takes over at its next tick. */
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
 * Leases in the fleet's Redis, under `mwg:poll:<feed name>`; the feed name holds a caller scope,
 * never a key. While `health` knows Redis does not answer, nobody can be sure to lead: hold fails
 * at once, the poller skips its tick, and subscriptions pause until Redis answers again.
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
