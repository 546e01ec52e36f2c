import { GatewayError } from '../errors/errors.ts';
import { loadById, restIdOf } from '../schema/global-ids.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';
import type { DepositDTO } from '../upstream/types.ts';
import type { Feed, Watcher } from './feed.ts';
import { type ListState, listFeed } from './list-feed.ts';

/**
 * The deposit subscription, Subscription.depositsUpdated: its feed (what a poller reads, feed.ts)
 * and the Watcher the resolver hands to LivePolling.watch (live.ts), which filters it per
 * subscriber and checks the wallet first.
 */

/** The statuses a deposit passes through before a final one (completed, failed). */
const IN_FLIGHT = ['pending', 'processing'];

/**
 * All deposits of one caller scope, for a checkout or point-of-sale screen waiting for a payment,
 * or a deposits list: the subscriber is shown each deposit that appears or changes status after
 * it subscribed (nothing at first: the screen queried the list, and a payment screen waits for a
 * new one); a new `updatedAt` alone is no news. One feed per caller scope serves every subscriber
 * of that key, whatever wallet or statuses each one wants (they are filtered per subscriber): the
 * REST list has no wallet filter, and a status filter would hide a deposit's way to the status a
 * screen waits for. What a poll and a resume read: list-feed.ts.
 */
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
 * Subscription.depositsUpdated: the merchant's deposits as they appear and change status, only
 * those into wallet `walletId` (a global or REST id, as the client gave it) and with these REST
 * statuses when given. One feed per caller scope serves every wallet and filter. The wallet is
 * checked as `wallet(id:)` checks it: a malformed id is BAD_USER_INPUT before anything else (this
 * function throws it), and a wallet the REST API does not show this key (unknown, or another
 * merchant's: one answer) is NOT_FOUND before anything is polled.
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
