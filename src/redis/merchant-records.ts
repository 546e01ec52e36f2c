import type { Logger } from 'pino';
import type { MerchantRecords } from '../upstream/merchants.ts';
import type { RedisClient } from './connection.ts';

/**
 * The fleet's record of which merchant each wallet is (upstream/merchants.ts), so replicas that
 * saw different wallets of one merchant agree on its tag, and with it on its wallet index's chunks
 * (wallet-index-chunks.ts), its fair share and its limits. One key per wallet, under its own hash
 * tag (HMACs only: neither a wallet id nor a key is stored):
 *
 *   mwg:mwallet:{walletTag}   the least merchant tag proposed for the wallet
 *
 * Set by a script that keeps the lesser of the record and the proposal (one key: any Cluster
 * slot), for a month from the last change: a wallet never changes merchant, and a merchant whose
 * records expired is learnt again from its keys' next answers. Releases before 0.3.0 neither read
 * nor write these keys.
 */

const RECORD_TTL_S = 30 * 24 * 3600;

const KEEP_LEAST = `
local v = redis.call('GET', KEYS[1])
if not v or ARGV[1] < v then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
  return ARGV[1]
end
return v`;

export function redisMerchantRecords(redis: RedisClient, logger: Logger): MerchantRecords {
  return {
    async propose(walletTags, tag) {
      try {
        return await Promise.all(
          walletTags.map(
            async (wallet) =>
              (await redis.eval(KEEP_LEAST, 1, `mwg:mwallet:{${wallet}}`, tag, RECORD_TTL_S)) as string,
          ),
        );
      } catch (error) {
        logger.warn(
          { err: error },
          'merchant records: Redis failed; this replica groups keys by what it saw',
        );
        throw error;
      }
    },
  };
}
