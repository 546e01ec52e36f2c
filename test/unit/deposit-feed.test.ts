import { describe, expect, it } from 'vitest';
import { depositsFeed } from '../../src/subscriptions/deposit-feeds.ts';
import type { Caller } from '../../src/upstream/caller.ts';
import type { MerchantWalletClient } from '../../src/upstream/client.ts';
import type { DepositDTO, ListParams } from '../../src/upstream/types.ts';

/**
 * What one poll of the deposits feed reads and reports, against a REST API kept in an array:
 * the newest page always, the older deposits still in flight only when there are some (one by
 * one when alone, else one page of the in-flight ones), and a deposit reported once per status.
 */

function restAPI() {
  /** Oldest first; listed newest first, as the REST API does. */
  const deposits: DepositDTO[] = [];
  const calls: string[] = [];
  let clock = 0;
  const client = {
    async listDeposits(_caller: Caller, params: ListParams, options: { fresh?: boolean } = {}) {
      expect(options.fresh).toBe(true);
      calls.push(
        `list size=${params.size}${params.statusIn ? ` statusIn=${params.statusIn.join(',')}` : ''}`,
      );
      const matching = deposits
        .filter((d) => !params.statusIn || params.statusIn.includes(d.status))
        .reverse();
      const start = (params.page - 1) * params.size;
      return {
        items: matching.slice(start, start + params.size).map((d) => ({ ...d })),
        totalCount: matching.length,
      };
    },
    async getDeposit(_caller: Caller, id: string, options: { fresh?: boolean } = {}) {
      expect(options.fresh).toBe(true);
      calls.push(`get ${id}`);
      const found = deposits.find((d) => d.id === id);
      return found ? { ...found } : null;
    },
  };
  const at = () => new Date(Date.UTC(2026, 0, 1) + clock++).toISOString();
  return {
    client: client as unknown as MerchantWalletClient,
    calls,
    add(status: string): string {
      const createdAt = at();
      const id = `d${deposits.length}`;
      deposits.push({ id, status, createdAt, updatedAt: createdAt, wallet: { id: 'w1' } } as DepositDTO);
      return id;
    },
    set(id: string, changes: Partial<DepositDTO>) {
      Object.assign(deposits.find((d) => d.id === id) as DepositDTO, { updatedAt: at(), ...changes });
    },
    remove(id: string) {
      deposits.splice(
        deposits.findIndex((d) => d.id === id),
        1,
      );
    },
  };
}

const caller = {} as Caller;
const changes = (result: { changed: DepositDTO[] }) => result.changed.map((d) => `${d.id}:${d.status}`);

describe('depositsFeed', () => {
  it('begins from the newest page and the in-flight deposits, and shows none of them', async () => {
    const api = restAPI();
    api.add('completed');
    api.add('pending');
    const feed = depositsFeed(api.client, 'scope');
    expect(feed.name).toBe('deposits:scope');
    expect(feed.kind).toBe('deposits');
    const state = await feed.begin(caller);
    expect(api.calls).toEqual(['list size=50', 'list size=20 statusIn=pending,processing']);
    expect(feed.initial(state)).toEqual([]);
  });

  it('reports a new deposit and each new status once; another updatedAt alone is no news', async () => {
    const api = restAPI();
    const feed = depositsFeed(api.client, 'scope');
    let state = await feed.begin(caller);
    api.calls.length = 0;
    const poll = async () => {
      const result = await feed.poll(caller, state);
      state = result.state;
      return changes(result);
    };
    expect(await poll()).toEqual([]);
    const a = api.add('pending');
    const b = api.add('completed');
    // Oldest first.
    expect(await poll()).toEqual([`${a}:pending`, `${b}:completed`]);
    expect(await poll()).toEqual([]);
    api.set(a, {});
    expect(await poll()).toEqual([]);
    api.set(a, { status: 'processing' });
    expect(await poll()).toEqual([`${a}:processing`]);
    api.set(a, { status: 'completed' });
    expect(await poll()).toEqual([`${a}:completed`]);
    // Nothing in flight beyond the newest page: every poll was one read.
    expect(api.calls).toEqual(Array.from({ length: 6 }, () => 'list size=50'));
    expect(feed.version({ status: 'completed' } as DepositDTO)).toBe('completed');
    expect(feed.isLast({ status: 'completed' } as DepositDTO)).toBe(false);
  });

  it('follows older in-flight deposits: one alone by id, several through one in-flight page, until they settle', async () => {
    const api = restAPI();
    const alone = api.add('pending');
    for (let i = 0; i < 50; i++) api.add('completed');
    const feed = depositsFeed(api.client, 'scope');
    let state = await feed.begin(caller);
    const poll = async () => {
      api.calls.length = 0;
      const result = await feed.poll(caller, state);
      state = result.state;
      return changes(result);
    };
    expect(await poll()).toEqual([]);
    expect(api.calls).toEqual(['list size=50', `get ${alone}`]);
    api.set(alone, { status: 'processing' });
    expect(await poll()).toEqual([`${alone}:processing`]);
    api.set(alone, { status: 'completed' });
    expect(await poll()).toEqual([`${alone}:completed`]);
    // Settled: never read again.
    expect(await poll()).toEqual([]);
    expect(api.calls).toEqual(['list size=50']);

    // Two in flight fall off the newest page as 50 more arrive.
    const one = api.add('pending');
    const two = api.add('processing');
    expect(await poll()).toEqual([`${one}:pending`, `${two}:processing`]);
    for (let i = 0; i < 50; i++) api.add('completed');
    // The poll that sees them leave the page already reads them on the in-flight page.
    expect((await poll()).length).toBe(50);
    expect(api.calls).toEqual(['list size=50', 'list size=100 statusIn=pending,processing']);
    expect(await poll()).toEqual([]);
    expect(api.calls).toEqual(['list size=50', 'list size=100 statusIn=pending,processing']);
    // One settles: it left the in-flight page, so it alone is read by id.
    api.set(one, { status: 'failed' });
    expect(await poll()).toEqual([`${one}:failed`]);
    expect(api.calls).toEqual(['list size=50', 'list size=100 statusIn=pending,processing', `get ${one}`]);
    // One vanishes: dropped without news.
    api.remove(two);
    expect(await poll()).toEqual([]);
    expect(await poll()).toEqual([]);
    expect(api.calls).toEqual(['list size=50']);
  });

  it('follows at most the 20 newest of the older in-flight deposits', async () => {
    const api = restAPI();
    const inFlight = Array.from({ length: 25 }, () => api.add('pending'));
    for (let i = 0; i < 50; i++) api.add('completed');
    const feed = depositsFeed(api.client, 'scope');
    // The first read knows the 20 newest in flight.
    let state = await feed.begin(caller);
    for (const id of inFlight) api.set(id, { status: 'completed' });
    api.calls.length = 0;
    const result = await feed.poll(caller, state);
    state = result.state;
    expect(changes(result)).toEqual(inFlight.slice(5).map((id) => `${id}:completed`));
    expect(api.calls).toEqual([
      'list size=50',
      'list size=100 statusIn=pending,processing',
      ...inFlight.slice(5).map((id) => `get ${id}`),
    ]);
  });
});
