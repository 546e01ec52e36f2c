import { LRUCache } from 'lru-cache';
import type { CallerScopes } from './caller-scope.ts';

/**
 * Which caller scopes (API keys) are keys of one merchant, learnt from what the REST API already
 * says: every answer is scoped to the key's merchant, and a wallet belongs to exactly one merchant,
 * so two keys whose 2xx answers name the same wallet id are keys of one merchant. What shows a
 * key's wallets: the wallet list and a wallet by id, and the `wallet.id` of the deposits and
 * withdrawal intents in its lists (the receiving or source wallet, always the merchant's own).
 *
 * A merchant is named by a tag, `m.` and an HMAC of one of its wallet ids under the callers'
 * scope secret (the fleet's, with Redis): never a wallet id, never a key. The tag of a group of
 * wallets is the least tag of its wallets, so replicas that saw the same wallets agree on it
 * without asking one another; a key whose answers join two groups (its merchant's newer wallet
 * and an older one) merges them under the lesser tag. With a store (the fleet's Redis), each
 * wallet's record keeps the least tag proposed for it, so a replica that saw fewer of a
 * merchant's wallets adopts the tag the others use (`MerchantRecords`). Until then it may group a
 * merchant's keys under another tag: less sharing, never a wrong one.
 *
 * A key that shows no wallet (a merchant without wallets, or a key whose reads all failed) stays a
 * merchant of its own: its scope is its group. The group only decides what may be shared across a
 * merchant's keys: its wallet index (where its items lie, never the items: every item shown is
 * read with the caller's own key and checked), its fair share of the REST API, its walk slots, its
 * idempotency records' bound and, if set, its rate limit. A wrong group could therefore share a
 * bound or discard an index, never show one merchant another's data.
 *
 * Every answer is handed in; a wallet the key named before costs a set lookup, a new one an HMAC,
 * so a screen pays a few lookups for it and a new wallet joins its merchant with the answer that
 * first names it. A key the REST API
 * refused (401: revoked, rotated out) is forgotten; its merchant's index stays for the other keys.
 */

/** Keys whose merchant is kept (as many as caller scopes). */
const MEMBERS_KEPT = 10_000;
/** Wallets whose merchant is kept (about 150 bytes each). */
const WALLETS_KEPT = 100_000;
/** How often a key's wallets are proposed to the fleet's records again (which reads back theirs). */
export const REFRESH_MS = 60_000;
/** Wallet ids kept per key (for the fast path): merchants have few, and one shared wallet is all a group needs. */
const WALLETS_PER_KEY = 8;
/** A merchant tag's prefix: a scope (base64url) never contains a dot, so the two never collide. */
const TAG_PREFIX = 'm.';

/** The fleet's copy of which merchant tag each wallet tag has (redis/merchant-records.ts). */
export interface MerchantRecords {
  /**
   * Proposes `tag` for each of these wallet tags: each record keeps the least tag ever proposed
   * for its wallet. Resolves to the records after, in order.
   */
  propose(walletTags: readonly string[], tag: string): Promise<readonly string[]>;
}

interface Member {
  tag: string;
  /** When the fleet's records were last asked about its wallets (or when it was first seen). */
  learnt: number;
  /** The wallet ids its answers named (at most WALLETS_PER_KEY; a merchant's others go the slow path). */
  wallets: Set<string>;
  /** The tags of all the wallets its answers named (at most WALLETS_PER_KEY × 4). */
  tags: Set<string>;
}

export class Merchants {
  private readonly scopes: Pick<CallerScopes, 'tagOf'>;
  private readonly members: LRUCache<string, Member>;
  /** Wallet tag → merchant tag. */
  private readonly wallets: LRUCache<string, string>;
  private readonly records: MerchantRecords | undefined;
  private readonly now: () => number;
  /**
   * The tag this process last proposed for each wallet tag, and when: proposed again when a lesser
   * one is learnt, or once REFRESH_MS passed (which reads back what other replicas proposed).
   */
  private readonly proposed: LRUCache<string, { tag: string; at: number }>;
  /** Wallet id → its tag: an HMAC once per wallet per process. */
  private readonly tagsOfIds: LRUCache<string, string>;

  constructor(
    scopes: Pick<CallerScopes, 'tagOf'>,
    options: {
      records?: MerchantRecords;
      now?: () => number;
      /** Keys and wallets kept (least recently used go first); default MEMBERS_KEPT and WALLETS_KEPT. */
      kept?: { keys: number; wallets: number };
    } = {},
  ) {
    this.scopes = scopes;
    this.members = new LRUCache({ max: options.kept?.keys ?? MEMBERS_KEPT });
    this.wallets = new LRUCache({ max: options.kept?.wallets ?? WALLETS_KEPT });
    this.proposed = new LRUCache({ max: options.kept?.wallets ?? WALLETS_KEPT });
    this.tagsOfIds = new LRUCache({ max: options.kept?.wallets ?? WALLETS_KEPT });
    this.records = options.records;
    this.now = options.now ?? Date.now;
  }

  /** The group of a caller scope: its merchant's tag once learnt, else the scope itself. */
  of(scope: string): string {
    return this.members.get(scope)?.tag ?? scope;
  }

  /** Whether anything was learnt of this scope yet (a group, or that its answers named no wallet). */
  known(scope: string): boolean {
    return this.members.has(scope);
  }

  /**
   * Wallet ids a 2xx answer for this scope named (see the module's comment). Returns the scope's
   * group after it. Cheap for wallets the scope named before (a set lookup each): callers hand in
   * every answer, so a wallet first named by a later answer joins at once.
   */
  learn(scope: string, walletIds: Iterable<string>): string {
    const now = this.now();
    let member = this.members.get(scope);
    let named: string[] | undefined;
    for (const id of walletIds) {
      if (typeof id !== 'string' || id === '' || member?.wallets.has(id)) continue;
      named ??= [];
      named.push(id);
    }
    const stale = member === undefined || now - member.learnt >= REFRESH_MS;
    if (named === undefined && !stale) return (member as Member).tag;
    if (!member) {
      member = { tag: scope, learnt: now, wallets: new Set(), tags: new Set() };
      this.members.set(scope, member);
    }
    for (const id of named ?? []) {
      let tag = this.tagsOfIds.get(id);
      if (tag === undefined) {
        tag = this.scopes.tagOf(id);
        this.tagsOfIds.set(id, tag);
      }
      if (member.wallets.size < WALLETS_PER_KEY) member.wallets.add(id);
      if (member.tags.size < WALLETS_PER_KEY * 4) member.tags.add(tag);
    }
    // Known as a merchant of its own until its answers name a wallet.
    if (member.tags.size === 0) return member.tag;
    const before = member.tag;
    let tag = before.startsWith(TAG_PREFIX) ? before : undefined;
    for (const wallet of member.tags) {
      const known = this.wallets.get(wallet) ?? `${TAG_PREFIX}${wallet}`;
      if (tag === undefined || known < tag) tag = known;
    }
    member.tag = tag as string;
    this.join(member.tags, member.tag);
    if (stale) member.learnt = now;
    if (member.tag !== before) this.retag(before, member.tag);
    if (this.records && (stale || named !== undefined)) this.record(scope, member.tags, member.tag);
    return member.tag;
  }

  /**
   * Told when a key's group changes name (`from`: its scope, or a merchant's tag a lesser one
   * replaced): what was kept under the old name (its wallet index) may move to the new one.
   */
  readonly retagged = new Set<(from: string, to: string) => void>();

  private retag(from: string, to: string): void {
    for (const listener of this.retagged) listener(from, to);
  }

  /**
   * A key the gateway tried to learn and could not (its wallets' read failed or was refused): a
   * merchant of its own until one of its answers names a wallet, so it is not read again.
   */
  tried(scope: string): void {
    if (!this.members.has(scope))
      this.members.set(scope, { tag: scope, learnt: this.now(), wallets: new Set(), tags: new Set() });
  }

  /** The key was refused (a 401): it is no longer counted as its merchant's. */
  forget(scope: string): void {
    this.members.delete(scope);
  }

  /** Everything learnt, for a new scope secret (tags under the old one mean nothing any more). */
  clear(): void {
    this.members.clear();
    this.wallets.clear();
    this.proposed.clear();
    this.tagsOfIds.clear();
  }

  private join(wallets: Iterable<string>, tag: string): void {
    for (const wallet of wallets) {
      const known = this.wallets.get(wallet);
      if (known === undefined || tag < known) this.wallets.set(wallet, tag);
    }
  }

  /**
   * The fleet's records of these wallets: each keeps the least tag proposed for it, and the least
   * of theirs and ours wins, here and for the scope, so every replica ends on a merchant's least
   * tag as its keys' answers come in. In the background: a request never waits for Redis, and
   * Redis failing only means this replica groups by what it saw itself.
   */
  private record(scope: string, wallets: Set<string>, tag: string): void {
    const now = this.now();
    const asked = [...wallets].filter((wallet) => {
      const before = this.proposed.get(wallet);
      return before === undefined || tag < before.tag || now - before.at >= REFRESH_MS;
    });
    if (asked.length === 0) return;
    for (const wallet of asked) this.proposed.set(wallet, { tag, at: now });
    (this.records as MerchantRecords).propose(asked, tag).then(
      (recorded) => {
        let least = tag;
        for (const other of recorded) if (other.startsWith(TAG_PREFIX) && other < least) least = other;
        if (least === tag) return;
        this.join(wallets, least);
        const member = this.members.get(scope);
        if (member && member.tag === tag) {
          member.tag = least;
          this.retag(tag, least);
        }
      },
      () => {
        for (const wallet of asked) if (this.proposed.get(wallet)?.tag === tag) this.proposed.delete(wallet);
      },
    );
  }
}

/**
 * The merchant wallet ids of REST items (deposits, withdrawal intents): their `wallet.id` where
 * the reference's `type` is `merchant_wallet`. The spec shows no other type; one it may add (a
 * platform's or a shared wallet) would name a wallet that is not the merchant's own.
 */
export function walletIdsOf(
  items: readonly { wallet?: { id?: unknown; type?: unknown } | null }[],
): string[] {
  const ids: string[] = [];
  for (const item of items) {
    const wallet = item.wallet;
    if (wallet?.type !== 'merchant_wallet') continue;
    const id = wallet.id;
    if (typeof id === 'string' && !ids.includes(id)) ids.push(id);
  }
  return ids;
}
