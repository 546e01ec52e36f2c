import type { Logger } from 'pino';
import type { MerchantRecords } from '../upstream/merchants.ts';
import type { RedisClient } from './connection.ts';

/**
 * The fleet's records of each wallet's merchant tag (upstream/merchants.ts): `mwg:mwallet:{walletTag}`,
 * the least tag proposed for the wallet, kept by a script for a month from its last change
 * (docs/wallet-index.md#a-merchant-not-a-key). HMACs only: neither a wallet id nor a key is stored.
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
