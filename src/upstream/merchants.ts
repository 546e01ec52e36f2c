import { LRUCache } from 'lru-cache';
import type { CallerScopes } from './caller-scope.ts';

/**
 * Which caller scopes are keys of one merchant, learnt from the wallet ids their 2xx answers name
 * (a wallet belongs to one merchant): docs/wallet-index.md#a-merchant-not-a-key. A group is named
 * by a tag, `m.` and the least HMAC of its wallets' ids (never an id or a key), so replicas that saw
 * the same wallets agree; with `records` (the fleet's), each wallet keeps the least tag proposed.
 * A key that names no wallet is a group of its own. A wrong group can only share a bound or discard
 * an index, never show one merchant another's data.
 */

const MEMBERS_KEPT = 10_000;
/** About 150 bytes each. */
const WALLETS_KEPT = 100_000;
/** How often a key's wallets are proposed to the fleet's records again (which reads back theirs). */
export const REFRESH_MS = 60_000;
/** Wallet ids kept per key for the fast path: one shared wallet is all a group needs. */
const WALLETS_PER_KEY = 8;
/** A scope (base64url) never contains a dot, so a tag never equals one. */
const TAG_PREFIX = 'm.';

export interface MerchantRecords {
  /** Keeps the least tag ever proposed for each wallet tag; resolves to each record after, in order. */
  propose(walletTags: readonly string[], tag: string): Promise<readonly string[]>;
}

interface Member {
  tag: string;
  /** When the fleet's records were last asked about its wallets. */
  learnt: number;
  wallets: Set<string>;
  tags: Set<string>;
}

export class Merchants {
  private readonly scopes: Pick<CallerScopes, 'tagOf'>;
  private readonly members: LRUCache<string, Member>;
  /** Wallet tag → merchant tag. */
  private readonly wallets: LRUCache<string, string>;
  private readonly records: MerchantRecords | undefined;
  private readonly now: () => number;
  /** The tag last proposed for each wallet tag, and when: again for a lesser one, or after REFRESH_MS. */
  private readonly proposed: LRUCache<string, { tag: string; at: number }>;
  private readonly tagsOfIds: LRUCache<string, string>;

  constructor(
    scopes: Pick<CallerScopes, 'tagOf'>,
    options: {
      records?: MerchantRecords;
      now?: () => number;
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

  /** The scope's group: its merchant's tag once learnt, else the scope itself. */
  of(scope: string): string {
    return this.members.get(scope)?.tag ?? scope;
  }

  /** Whether anything was learnt of this scope (a group, or that its answers named no wallet). */
  known(scope: string): boolean {
    return this.members.has(scope);
  }

  /** Notes the wallet ids a 2xx answer for this scope named; returns its group (cheap for known wallets). */
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

  /** Told when a group changes name (a scope learnt, a tag replaced by a lesser one): its index moves. */
  readonly retagged = new Set<(from: string, to: string) => void>();

  private retag(from: string, to: string): void {
    for (const listener of this.retagged) listener(from, to);
  }

  /** A key whose wallets' read failed or was refused: a group of its own, so it is not read again. */
  tried(scope: string): void {
    if (!this.members.has(scope))
      this.members.set(scope, { tag: scope, learnt: this.now(), wallets: new Set(), tags: new Set() });
  }

  /** A 401: the key no longer counts as its merchant's. */
  forget(scope: string): void {
    this.members.delete(scope);
  }

  /** For a new scope secret: tags under the old one mean nothing any more. */
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

  /** Proposes to the fleet's records, adopting a lesser tag they hold; in the background, retried later. */
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
 * The ids of REST items' `wallet` where its `type` is `merchant_wallet`; another type the spec may
 * add could name a wallet that is not the merchant's own.
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
