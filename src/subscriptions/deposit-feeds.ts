import { GatewayError } from '../errors.ts';
import { loadById, restIdOf } from '../global-ids.ts';
import type { Caller } from '../upstream/caller.ts';
import type { MerchantWalletClient } from '../upstream/client.ts';
import type { DepositDTO } from '../upstream/types.ts';
import type { Feed, Watcher } from './feed.ts';

/**
 * The deposit subscription, Subscription.depositsUpdated: its feed (what a poller reads, feed.ts)
 * and the Watcher the resolver hands to LivePolling.watch (live.ts), which filters it per
 * subscriber and checks the wallet first.
 */

/** Statuses after which a deposit never changes (see DepositStatus). */
const FINAL = new Set(['completed', 'failed']);
/** The statuses a deposit passes through before a final one, as the REST `statusIn` filter. */
const IN_FLIGHT = ['pending', 'processing'];

/** The newest deposits read per poll; a merchant receiving more than this many between two polls loses some news. */
const NEWEST = 50;
/** Deposits still in flight but no longer among the newest that a feed follows, at most. */
const MAX_TRACKED = 20;
/** The in-flight deposits read in one page when several older ones are followed. */
const IN_FLIGHT_PAGE = 100;

/** What a subscriber is told about: a deposit's status. Nothing else of a deposit is expected to change. */
const versionOf = (deposit: DepositDTO) => deposit.status;
const isFinal = (deposit: DepositDTO) => FINAL.has(deposit.status);

type Seen = Map<string, { status: string; final: boolean; createdAt: string }>;

/**
 * All deposits of one caller scope, for a checkout or point-of-sale screen waiting for a payment,
 * or a deposits list: the subscriber is shown each deposit that appears or changes status after
 * it subscribed (nothing at first: the screen queried the list, and a payment screen waits for a
 * new one). One feed per caller scope serves every subscriber of that key, whatever wallet or
 * statuses each one wants (they are filtered per subscriber): the REST list has no wallet filter,
 * and a status filter would hide a deposit's way to the status a screen waits for.
 *
 * The REST API lists newest first (by creation) and has no "changed since": a poll reads the
 * NEWEST newest deposits, which holds every new deposit and most changes. A deposit still pending
 * or processing once it has left that page (older in-flight ones at subscribe time come from a
 * `statusIn` read) is followed too, up to MAX_TRACKED: one by one when it is alone, else through
 * one page of the in-flight deposits, and one by one only for those that left it (they reached
 * a final status). So a poll is one REST read, two while older deposits are in flight, plus one
 * per such deposit at the poll that sees it settle.
 */
export function depositsFeed(client: MerchantWalletClient, scope: string): Feed<DepositDTO, Seen> {
  const remember = (seen: Seen, deposit: DepositDTO) =>
    seen.set(deposit.id, {
      status: versionOf(deposit),
      final: isFinal(deposit),
      createdAt: deposit.createdAt,
    });

  /** The present state of older in-flight deposits `ids`, oldest first; vanished ones are left out. */
  async function reread(caller: Caller, ids: string[]) {
    const found = new Map<string, DepositDTO>();
    if (ids.length > 1) {
      const inFlight = await client.listDeposits(
        caller,
        { page: 1, size: IN_FLIGHT_PAGE, statusIn: IN_FLIGHT },
        { fresh: true },
      );
      for (const deposit of inFlight.items) found.set(deposit.id, deposit);
    }
    const missing = ids.filter((id) => !found.has(id));
    const read = await Promise.all(missing.map((id) => client.getDeposit(caller, id, { fresh: true })));
    for (const deposit of read) if (deposit) found.set(deposit.id, deposit);
    return ids.flatMap((id) => found.get(id) ?? []);
  }

  return {
    name: `deposits:${scope}`,
    kind: 'deposits',
    async begin(caller) {
      const [newest, inFlight] = await Promise.all([
        client.listDeposits(caller, { page: 1, size: NEWEST }, { fresh: true }),
        client.listDeposits(caller, { page: 1, size: MAX_TRACKED, statusIn: IN_FLIGHT }, { fresh: true }),
      ]);
      const seen: Seen = new Map();
      for (const deposit of [...newest.items, ...inFlight.items]) remember(seen, deposit);
      return seen;
    },
    initial: () => [],
    async poll(caller, previous) {
      const newest = await client.listDeposits(caller, { page: 1, size: NEWEST }, { fresh: true });
      const onPage = new Set(newest.items.map((deposit) => deposit.id));
      const older = [...previous]
        .filter(([id, { final }]) => !final && !onPage.has(id))
        .sort(([, a], [, b]) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0))
        .slice(-MAX_TRACKED)
        .map(([id]) => id);
      const olderDeposits = await reread(caller, older);
      const state: Seen = new Map();
      const changed: DepositDTO[] = [];
      // Oldest first, so a subscriber sees changes in the order they likely happened.
      for (const deposit of [...olderDeposits, ...[...newest.items].reverse()]) {
        if (previous.get(deposit.id)?.status !== versionOf(deposit)) changed.push(deposit);
        if (onPage.has(deposit.id) || !isFinal(deposit)) remember(state, deposit);
      }
      return { state, changed };
    },
    version: versionOf,
    isLast: () => false,
  };
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
}): Watcher<DepositDTO, Seen> {
  const { walletId: given, statuses } = filter;
  const field = ['walletId'];
  const walletId = given === undefined ? undefined : restIdOf(given, 'Wallet', field);
  return (client, caller) => ({
    feed: depositsFeed(client, caller.cacheScope),
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
