import { describe, expect, it } from 'vitest';
import { listFeed } from '../../src/subscriptions/list-feed.ts';
import type { Caller } from '../../src/upstream/caller.ts';

/**
 * A list feed with an in-flight window (as the withdrawal-list feed has, at 1,000), here with a
 * window of 5 against a REST API kept in an array, so that pages shift under it: every record
 * that appears or changes status is reported once per status, each poll is two list reads plus
 * one read by id per settled record, whatever settles above the page a poll reads.
 */

interface Rec {
  id: string;
  status: string;
  createdAt: string;
}

const OPEN = ['open'];

function restAPI() {
  /** Oldest first; listed newest first. */
  const records: Rec[] = [];
  const calls: string[] = [];
  let clock = 0;
  return {
    calls,
    source: {
      name: 'test',
      kind: 'withdrawal_intents' as const,
      inFlight: OPEN,
      version: (r: Rec) => r.status,
      inFlightWindow: 5,
      async list(_caller: Caller, query: { page: number; size: number; statusIn?: string[] }) {
        calls.push(`list page=${query.page} size=${query.size}${query.statusIn ? ' open' : ''}`);
        const matching = records
          .filter((r) => !query.statusIn || query.statusIn.includes(r.status))
          .reverse();
        const start = (query.page - 1) * query.size;
        return {
          items: matching.slice(start, start + query.size).map((r) => ({ ...r })),
          paging: { totalCount: matching.length },
        };
      },
      async get(_caller: Caller, id: string) {
        calls.push(`get ${id}`);
        const found = records.find((r) => r.id === id);
        return found ? { ...found } : null;
      },
    },
    add(status: string): string {
      const id = `r${records.length}`;
      records.push({ id, status, createdAt: new Date(Date.UTC(2026, 0, 1) + clock++ * 1000).toISOString() });
      return id;
    },
    set(id: string, status: string) {
      (records.find((r) => r.id === id) as Rec).status = status;
    },
  };
}

const caller = {} as Caller;

async function driver(api: ReturnType<typeof restAPI>) {
  const feed = listFeed<Rec>(api.source);
  let state = await feed.begin(caller);
  return async function poll() {
    api.calls.length = 0;
    const result = await feed.poll(caller, state);
    state = result.state;
    return { changed: result.changed.map((r) => `${r.id}:${r.status}`), calls: [...api.calls] };
  };
}

/** Polls `n` times; every change reported, in order. */
async function polls(poll: () => Promise<{ changed: string[]; calls: string[] }>, n: number) {
  const changed: string[] = [];
  const calls: number[] = [];
  for (let i = 0; i < n; i++) {
    const result = await poll();
    changed.push(...result.changed);
    calls.push(result.calls.filter((call) => call.startsWith('list')).length);
  }
  return { changed, calls };
}

describe('a list feed with an in-flight window', () => {
  it('reads every page of the in-flight list first, then one page a poll in turn', async () => {
    const api = restAPI();
    for (let i = 0; i < 12; i++) api.add('open');
    for (let i = 0; i < 60; i++) api.add('done');
    const poll = await driver(api);
    expect(api.calls).toEqual([
      'list page=1 size=50',
      'list page=1 size=5 open',
      'list page=2 size=5 open',
      'list page=3 size=5 open',
    ]);
    const pages: string[] = [];
    for (let i = 0; i < 6; i++) {
      const { changed, calls } = await poll();
      expect(changed).toEqual([]);
      expect(calls[0]).toBe('list page=1 size=50');
      expect(calls).toHaveLength(2);
      pages.push(calls[1] as string);
    }
    expect(pages).toEqual([1, 2, 3, 1, 2, 3].map((page) => `list page=${page} size=5 open`));
  });

  it('reports each status once when records settle above the page a poll reads (pages shift up)', async () => {
    const api = restAPI();
    const open = Array.from({ length: 20 }, () => api.add('open'));
    for (let i = 0; i < 60; i++) api.add('done');
    const poll = await driver(api);
    const reported: string[] = [];
    const settled: string[] = [];
    reported.push(...(await poll()).changed); // page 1; the next poll reads page 2
    // Settling the newest 4 (all of page 1) shifts every page up by 4; more further down later.
    for (const round of [[19, 18, 17, 16], [10, 3], [15, 0, 7], [], [], [12]]) {
      for (const n of round) {
        api.set(open[n] as string, 'done');
        settled.push(`${open[n]}:done`);
      }
      const { changed, calls } = await poll();
      reported.push(...changed);
      expect(calls.filter((call) => call.startsWith('list'))).toHaveLength(2);
    }
    const rest = await polls(poll, 12);
    expect(rest.calls.every((n) => n === 2)).toBe(true);
    reported.push(...rest.changed);
    expect(reported.sort()).toEqual(settled.sort());
  });

  it('reads again from the page before when records settled above a page, so a record there is seen in its turn', async () => {
    const api = restAPI();
    api.source.inFlight = ['a', 'b', 'c'];
    const open = Array.from({ length: 15 }, () => api.add('a'));
    for (let i = 0; i < 60; i++) api.add('done');
    const poll = await driver(api);
    expect((await poll()).calls).toEqual(['list page=1 size=50', 'list page=1 size=5 open']);
    // Two of page 1 settle: page 2 now begins 2 lower, past r9 and r8, which change meanwhile.
    api.set(open[14] as string, 'done');
    api.set(open[13] as string, 'done');
    api.set(open[9] as string, 'b');
    const second = await poll();
    expect(second.calls).toEqual(['list page=1 size=50', 'list page=2 size=5 open']);
    // So the next poll reads page 1 again (from where page 1 ended) and sees them.
    const third = await poll();
    expect(third.calls.slice(0, 2)).toEqual(['list page=1 size=50', 'list page=1 size=5 open']);
    expect([...second.changed, ...third.changed].sort()).toEqual(
      [`${open[14]}:done`, `${open[13]}:done`, `${open[9]}:b`].sort(),
    );
    api.set(open[9] as string, 'c');
    expect((await polls(poll, 3)).changed).toEqual([`${open[9]}:c`]);
  });

  it('reports a change of a record on the last page within one turn of the pages, once', async () => {
    const api = restAPI();
    api.source.inFlight = ['open', 'held'];
    const open = Array.from({ length: 14 }, () => api.add('open'));
    for (let i = 0; i < 60; i++) api.add('done');
    const poll = await driver(api);
    const deepest = open[0] as string;
    api.set(deepest, 'held');
    const first = await polls(poll, 3);
    expect(first.changed).toEqual([`${deepest}:held`]);
    api.set(deepest, 'done');
    const second = await polls(poll, 3);
    expect(second.changed).toEqual([`${deepest}:done`]);
    expect(await polls(poll, 3)).toEqual({ changed: [], calls: [2, 2, 2] });
  });

  it('reports records created in flight past the newest page as new, found on the in-flight list', async () => {
    const api = restAPI();
    for (let i = 0; i < 60; i++) api.add('done');
    const poll = await driver(api);
    const early = [api.add('open'), api.add('open')];
    for (let i = 0; i < 55; i++) api.add('done');
    const { changed } = await poll();
    expect(changed.slice(0, 2)).toEqual(early.map((id) => `${id}:open`));
    expect(changed).toHaveLength(52);
    expect(await polls(poll, 2)).toEqual({ changed: [], calls: [2, 2] });
  });

  it('follows at most 10 pages of the in-flight list: older records are no longer read', async () => {
    const api = restAPI();
    const open = Array.from({ length: 60 }, () => api.add('open'));
    for (let i = 0; i < 60; i++) api.add('done');
    const poll = await driver(api);
    expect(api.calls.filter((call) => call.endsWith('open'))).toHaveLength(10);
    const beyond = open[0] as string;
    api.set(beyond, 'done');
    const { changed, calls } = await polls(poll, 20);
    expect(changed).toEqual([]);
    expect(calls.every((n) => n === 2)).toBe(true);
  });
});
