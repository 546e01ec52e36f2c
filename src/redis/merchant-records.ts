import type { Logger } from 'pino';
import type { MerchantRecords } from '../upstream/merchants.ts';
import type { RedisClient } from './connection.ts';

/**
 * The fleet's record of which merchant each wallet is (upstream/merchants.ts), so replicas that
 * saw different wallets of one merchant agree on its tag, and with it on its wallet index's chunks
 * (wallet-index-chunks.ts), its fair share and its limits. One key per wallet, under its own tag
 * (HMACs only: neither a wallet id nor a key is stored):
 *
 *   mwg:mwallet:{walletTag}   the merchant tag first recorded for the wallet
 *
 * Written with SET NX (the first replica's tag stays; a lesser tag learnt later wins in each
 * process that sees both, as the module's rule says), for a month, renewed by none: a wallet never
 * changes merchant, and a merchant whose record expired is learnt again from its next answers.
 * Releases before 0.3.0 neither read nor write these keys.
 */

const RECORD_TTL_S = 30 * 24 * 3600;

export function redisMerchantRecords(redis: RedisClient, logger: Logger): MerchantRecords {
  return {
    async claim(walletTags, tag) {
      try {
        return await Promise.all(
          walletTags.map(
            async (wallet) =>
              // NX with GET (Redis 7): the value before, null when this call recorded `tag`.
              (await redis.call('SET', `mwg:mwallet:{${wallet}}`, tag, 'NX', 'GET', 'EX', RECORD_TTL_S)) as
                | string
                | null,
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
