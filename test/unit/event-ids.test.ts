import { describe, expect, it } from 'vitest';
import { INPUT_LIMITS } from '../../src/schema/input-limits.ts';
import { decodeEventId, encodeEventId, versionTag } from '../../src/subscriptions/event-ids.ts';
import type { Position } from '../../src/subscriptions/feed.ts';
import { listFeed, RESUME_PAGE, RESUME_PAGES } from '../../src/subscriptions/list-feed.ts';
import type { Caller } from '../../src/upstream/caller.ts';

const KEY = 'Bearer mw_test_key_one';
const OTHER_KEY = 'Bearer mw_test_key_two';
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

const position: Position = {
  boundary: { at: 1_700_000_000_123, id: uuid(9) },
  followed: [
    { id: uuid(1), tag: versionTag('pending'), at: 1_700_000_000_001 },
    { id: 'not-a-uuid', tag: versionTag('reviewing|t'), at: 1_700_000_000_002 },
  ],
};

describe('event ids', () => {
  it('decode to the position they were made of, for the same key and feed kind', () => {
    const id = encodeEventId('withdrawal_intents', position, KEY);
    expect(id).toMatch(/^[\w-]+$/);
    expect(decodeEventId(id, 'withdrawal_intents', KEY)).toEqual(position);
    expect(decodeEventId(encodeEventId('deposits', { followed: [] }, KEY), 'deposits', KEY)).toEqual({
      followed: [],
    });
  });

  it('carry no API key, and are refused with EVENT_ID_NOT_RESUMABLE for another key, another feed, an altered or forged id', () => {
    const id = encodeEventId('withdrawal_intents', position, KEY);
    expect(Buffer.from(id, 'base64url').toString('latin1')).not.toContain('mw_test_key');
    const refusal = (
      text: string,
      kind: 'withdrawal_intents' | 'deposits' = 'withdrawal_intents',
      key = KEY,
    ) => {
      try {
        decodeEventId(text, kind, key);
        return 'accepted';
      } catch (error) {
        const { code, extensions } = error as { code: string; extensions: { reason: string } };
        return `${code}: ${extensions.reason}`;
      }
    };
    expect(refusal(id, 'withdrawal_intents', OTHER_KEY)).toBe(
      'EVENT_ID_NOT_RESUMABLE: not sent to this API key',
    );
    expect(refusal(id, 'deposits')).toBe('EVENT_ID_NOT_RESUMABLE: from another subscription field');
    const altered = Buffer.from(id, 'base64url');
    altered[5] = (altered[5] ?? 0) ^ 1;
    expect(refusal(altered.toString('base64url'))).toBe('EVENT_ID_NOT_RESUMABLE: not sent to this API key');
    expect(refusal('AQAB')).toBe('EVENT_ID_NOT_RESUMABLE: malformed');
    expect(refusal('not base64!')).toBe('EVENT_ID_NOT_RESUMABLE: malformed');
    expect(refusal('A'.repeat(INPUT_LIMITS.eventId + 4))).toBe('EVENT_ID_NOT_RESUMABLE: malformed');
  });
});

/** A REST list of records, newest first, counting reads. */
function restList() {
  const records: { id: string; status: string; createdAt: string }[] = [];
  const calls: string[] = [];
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const feed = listFeed({
    name: 'test:scope',
    kind: 'withdrawal_intents',
    list: async (_caller, { page, size, statusIn }) => {
      calls.push(`list page=${page} size=${size}${statusIn ? ` statusIn=${statusIn}` : ''}`);
      const all = [...records].reverse().filter((r) => !statusIn || statusIn.includes(r.status));
      return { items: all.slice((page - 1) * size, page * size) };
    },
    get: async (_caller, id) => {
      calls.push(`get ${id}`);
      return records.find((r) => r.id === id) ?? null;
    },
    inFlight: ['pending'],
    version: (record) => record.status,
  });
  const add = (status: string) => {
    const record = { id: uuid(records.length + 1), status, createdAt: new Date(clock++).toISOString() };
    records.push(record);
    return record.id;
  };
  const set = (id: string, status: string) => {
    const record = records.find((r) => r.id === id);
    if (record) record.status = status;
  };
  return { feed, calls, add, set };
}

const caller = {} as Caller;

describe('resuming a list feed from an event id', () => {
  it('shows every record created or changed since, including old ones that settled off the newest pages, and nothing else', async () => {
    const api = restList();
    const old = api.add('pending');
    for (let i = 0; i < 120; i++) api.add('completed');
    const seenBefore = api.add('pending');
    let state = await api.feed.begin(caller);
    const id = encodeEventId('withdrawal_intents', api.feed.position(state), KEY);

    // While the client is away: the old one and one it knew settle, 30 are created.
    api.set(old, 'failed');
    api.set(seenBefore, 'completed');
    const created = Array.from({ length: 30 }, () => api.add('pending'));
    api.calls.length = 0;
    const resumed = await api.feed.resume(caller, decodeEventId(id, 'withdrawal_intents', KEY));
    expect(resumed.changed.map((r) => `${r.id}:${r.status}`)).toEqual([
      `${old}:failed`,
      `${seenBefore}:completed`,
      ...created.map((c) => `${c}:pending`),
    ]);
    // One page reached the boundary; the old one was read by id (alone, no in-flight page).
    expect(api.calls).toEqual([`list page=1 size=${RESUME_PAGE}`, `get ${old}`]);

    // Resuming from an event of the resumed stream shows only what came after it.
    let at = decodeEventId(id, 'withdrawal_intents', KEY);
    for (const value of resumed.changed.slice(0, 10)) at = api.feed.advance(at, value);
    const again = await api.feed.resume(caller, at);
    expect(again.changed.map((r) => r.id)).toEqual(resumed.changed.slice(10).map((r) => r.id));
    state = again.state;
    expect((await api.feed.poll(caller, state)).changed).toEqual([]);
  });

  it('refuses an id too far behind (more records created since than it reads), with EVENT_ID_NOT_RESUMABLE', async () => {
    const api = restList();
    api.add('completed');
    const state = await api.feed.begin(caller);
    const position = api.feed.position(state);
    for (let i = 0; i < RESUME_PAGE * RESUME_PAGES + 1; i++) api.add('completed');
    api.calls.length = 0;
    await expect(api.feed.resume(caller, position)).rejects.toMatchObject({ code: 'EVENT_ID_NOT_RESUMABLE' });
    expect(api.calls).toHaveLength(RESUME_PAGES);
  });
});
