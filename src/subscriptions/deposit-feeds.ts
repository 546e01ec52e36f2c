import { GatewayError } from '../errors/errors.ts';
import { loadById, restIdOf } from '../schema/global-ids.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';
import type { DepositDTO } from '../upstream/types.ts';
import type { Feed, Watcher } from './feed.ts';
import { type ListState, listFeed } from './list-feed.ts';

/** Subscription.depositsUpdated: its feed (feed.ts) and the Watcher its resolver hands to LivePolling. */

/** The statuses before a final one (completed, failed). */
const IN_FLIGHT = ['pending', 'processing'];

/** All deposits of one caller scope: one feed for the key's subscribers, whatever wallet or statuses. */
export function depositsFeed(client: MerchantWalletClient, scope: string): Feed<DepositDTO, ListState> {
  return listFeed<DepositDTO>({
    name: `deposits:${scope}`,
    kind: 'deposits',
    list: (caller, query) => client.listDeposits(caller, query, { fresh: true }),
    get: (caller, id) => client.getDeposit(caller, id, { fresh: true }),
    inFlight: IN_FLIGHT,
    version: (deposit) => deposit.status,
  });
}

/**
 * The Watcher of Subscription.depositsUpdated: the deposits into `walletId` (a global or REST id)
 * and with these REST statuses, when given. Throws BAD_USER_INPUT for a malformed id; its `check`
 * answers NOT_FOUND for a wallet this key is not shown (unknown or another merchant's), before any poll.
 */
export function depositsUpdated(filter: {
  walletId?: string | undefined;
  statuses?: readonly string[] | undefined;
}): Watcher<DepositDTO, ListState> {
  const { walletId: given, statuses } = filter;
  const field = ['walletId'];
  const walletId = given === undefined ? undefined : restIdOf(given, 'Wallet', field);
  return (client, caller) => ({
    feed: depositsFeed(client, caller.scope),
    accept: (deposit: DepositDTO) =>
      (walletId === undefined || deposit.wallet.id === walletId) &&
      (statuses === undefined || statuses.includes(deposit.status)),
    check:
      given === undefined
        ? undefined
        : async () => {
            if (await loadById((restId) => client.getWallet(caller, restId), given, 'Wallet', field)) return;
            throw new GatewayError('NOT_FOUND', `No wallet ${walletId} exists for this merchant.`, {
              extensions: { id: walletId },
            });
          },
  });
}
