import type { Caller } from '../upstream/caller.ts';
import { notResumable, versionTag } from './event-ids.ts';
import type { Feed, FeedKind, Position } from './feed.ts';

/**
 * A feed of all the records of one kind of one caller scope, from a REST list that is newest first,
 * filters by status only and has no "changed since": each record that appears or changes version
 * after subscribing, nothing at first. A poll reads the NEWEST newest records and follows those still
 * in flight below them: the newest MAX_TRACKED (by id when alone, else through one in-flight page),
 * or, with an `inFlightWindow`, every record of the in-flight list, up to MAX_WINDOW_PAGES pages read
 * one a poll in turn. A resume reads pages back to the event id's boundary, at most RESUME_PAGES
 * (further is EVENT_ID_NOT_RESUMABLE). Costs and what is missed: docs/subscriptions.md#what-a-poll-costs.
 */

const NEWEST = 50;
/** Records in flight below the newest that a feed without a window follows, at most. */
const MAX_TRACKED = 20;
const IN_FLIGHT_PAGE = 100;
/** Records in flight an event id follows, at most. */
export const MAX_FOLLOWED = NEWEST + MAX_TRACKED;
const MAX_WINDOW_PAGES = 10;
export const RESUME_PAGE = 100;
export const RESUME_PAGES = 5;

interface ListRecord {
  id: string;
  status: string;
  createdAt: string;
}

export interface ListFeedSource<T extends ListRecord> {
  name: string;
  kind: FeedKind;
  list(
    caller: Caller,
    query: { page: number; size: number; statusIn?: string[] },
  ): Promise<{ items: readonly T[]; paging?: { totalCount: number } }>;
  get(caller: Caller, id: string): Promise<T | null>;
  /** The statuses before a final one, as the REST `statusIn` filter. */
  inFlight: readonly string[];
  version(value: T): string;
  /** The in-flight page size (at most the REST API's page size) when every in-flight record is followed. */
  inFlightWindow?: number;
}

export interface ListState {
  seen: Map<string, Seen>;
  boundary: { at: number; id: string } | undefined;
  /** With a window: the creation where the next in-flight page begins (`page` when that estimate missed). */
  window?: { edge: number; page?: number };
}

export interface Seen {
  tag: string;
  final: boolean;
  at: number;
}

const createdAtOf = (record: ListRecord) => Date.parse(record.createdAt) || 0;

/** Whether `record` was created after `boundary`: news to a subscriber that did not follow it. */
function isNew(record: ListRecord, boundary: ListState['boundary']): boolean {
  if (!boundary) return true;
  const at = createdAtOf(record);
  return at > boundary.at || (at === boundary.at && record.id !== boundary.id);
}

export function listFeed<T extends ListRecord>(source: ListFeedSource<T>): Feed<T, ListState> {
  const { version } = source;
  const inFlight = new Set(source.inFlight);
  const isFinal = (record: T) => !inFlight.has(record.status);
  const remember = (state: ListState, record: T) =>
    state.seen.set(record.id, {
      tag: versionTag(version(record)),
      final: isFinal(record),
      at: createdAtOf(record),
    });

  /** The present state of older in-flight records `ids`, in that order; vanished ones are left out. */
  async function reread(caller: Caller, ids: string[]): Promise<T[]> {
    const found = new Map<string, T>();
    if (ids.length > 1) {
      const page = await source.list(caller, {
        page: 1,
        size: IN_FLIGHT_PAGE,
        statusIn: [...source.inFlight],
      });
      for (const record of page.items) found.set(record.id, record);
    }
    const missing = ids.filter((id) => !found.has(id));
    const read = await Promise.all(missing.map((id) => source.get(caller, id)));
    for (const record of read) if (record) found.set(record.id, record);
    return ids.flatMap((id) => found.get(id) ?? []);
  }

  /**
   * One page of the in-flight list, the one after `previous.window`: the records on it not among
   * `onPage`, and the followed records it should hold but does not (settled or vanished: the newest
   * `maxReads` read by id), oldest first; the followed records left as they were; and the next window.
   */
  async function window(
    caller: Caller,
    size: number,
    previous: ListState,
    followed: [string, Seen][],
    newest: readonly T[],
    maxReads: number,
  ) {
    const onPage = new Set(newest.map((record) => record.id));
    const cursor = previous.window;
    const edge = cursor?.edge ?? Number.POSITIVE_INFINITY;
    // Estimated from the followed records created since `edge`; records settled unseen make it begin lower.
    const newer =
      followed.filter(([, { at }]) => at >= edge).length +
      newest.filter((record) => !isFinal(record) && createdAtOf(record) >= edge).length;
    const number = cursor?.page ?? (cursor ? Math.floor(newer / size) + 1 : 1);
    const page = await source.list(caller, { page: number, size, statusIn: [...source.inFlight] });
    const items = page.items;
    const first = items[0];
    const last = items.at(-1);
    const more = items.length >= size && (!page.paging || number * size < page.paging.totalCount);
    // The creations the page covers: page 1 covers all newer, the last page all older; an empty page none.
    const upper = number > 1 && first ? createdAtOf(first) : Number.POSITIVE_INFINITY;
    const lower = number > 1 && !first ? upper : more && last ? createdAtOf(last) : Number.NEGATIVE_INFINITY;
    // Records settled above it shifted it past followed records: the page before is read next.
    const gap = number > 1 && (!first || followed.some(([, { at }]) => at > upper && at < edge));
    let next: ListState['window'];
    if (gap) next = { edge, page: number - 1 };
    else if (more && number < MAX_WINDOW_PAGES) next = { edge: lower };
    const found = new Set(items.map((record) => record.id));
    const covers = (at: number) => at >= lower && at <= upper;
    // Past the last page read (more than MAX_WINDOW_PAGES in flight): no longer followed.
    const beyond = (at: number) => !next && more && at < lower;
    const left = followed.filter(([id, { at }]) => covers(at) && !found.has(id));
    const waiting = left.slice(0, Math.max(0, left.length - maxReads));
    const kept = followed.filter(([id, { at }]) => !found.has(id) && !covers(at) && !beyond(at));
    const read = await Promise.all(left.slice(waiting.length).map(([id]) => source.get(caller, id)));
    const records = [
      ...items.filter((record) => !onPage.has(record.id)).reverse(),
      ...read.flatMap((record) => record ?? []),
    ].sort((a, b) => createdAtOf(a) - createdAtOf(b));
    return { records, kept: [...kept, ...waiting], next };
  }

  /** The changes (oldest first) and the state now, from `previous` and the newest page `newest`. */
  async function compare(caller: Caller, previous: ListState, newest: readonly T[], bound: number) {
    const onPage = new Set(newest.map((record) => record.id));
    const followed = [...previous.seen]
      .filter(([id, { final }]) => !final && !onPage.has(id))
      .sort(([, a], [, b]) => a.at - b.at);
    const {
      records: olderRecords,
      kept,
      next,
    } = source.inFlightWindow
      ? await window(caller, source.inFlightWindow, previous, followed, newest, bound)
      : {
          records: await reread(
            caller,
            followed.slice(-bound).map(([id]) => id),
          ),
          kept: [],
          next: undefined,
        };
    const state: ListState = { seen: new Map(kept), boundary: previous.boundary };
    if (next) state.window = next;
    const changed: T[] = [];
    // Oldest first, so a subscriber sees changes in the order they likely happened.
    for (const record of [...olderRecords, ...[...newest].reverse()]) {
      const known = previous.seen.get(record.id);
      if (known ? known.tag !== versionTag(version(record)) : isNew(record, previous.boundary)) {
        changed.push(record);
      }
      if (onPage.has(record.id) || !isFinal(record)) remember(state, record);
    }
    const [first] = newest;
    if (first && isNew(first, previous.boundary)) state.boundary = { at: createdAtOf(first), id: first.id };
    return { state, changed };
  }

  return {
    name: source.name,
    kind: source.kind,
    async begin(caller) {
      const [newest, olderInFlight] = await Promise.all([
        source.list(caller, { page: 1, size: NEWEST }),
        source.list(caller, {
          page: 1,
          size: source.inFlightWindow ?? MAX_TRACKED,
          statusIn: [...source.inFlight],
        }),
      ]);
      const state: ListState = { seen: new Map(), boundary: undefined };
      for (const record of [...newest.items, ...olderInFlight.items]) remember(state, record);
      // Every page of the window at once: a change of a record not read yet could not be told.
      for (const record of await restOfWindow(caller, olderInFlight)) remember(state, record);
      const [first] = newest.items;
      if (first) state.boundary = { at: createdAtOf(first), id: first.id };
      return state;
    },
    initial: () => [],
    async poll(caller, previous) {
      const newest = await source.list(caller, { page: 1, size: NEWEST });
      return compare(caller, previous, newest.items, MAX_TRACKED);
    },
    version,
    isLast: () => false,
    position(state) {
      const followed = [...state.seen]
        .filter(([, { final }]) => !final)
        .sort(([, a], [, b]) => a.at - b.at)
        .slice(-MAX_FOLLOWED)
        .map(([id, { tag, at }]) => ({ id, tag, at }));
      return state.boundary ? { boundary: state.boundary, followed } : { followed };
    },
    advance(position, value) {
      const followed = position.followed.filter(({ id }) => id !== value.id);
      if (!isFinal(value)) {
        followed.push({ id: value.id, tag: versionTag(version(value)), at: createdAtOf(value) });
      }
      const boundary = isNew(value, position.boundary)
        ? { at: createdAtOf(value), id: value.id }
        : position.boundary;
      return boundary ? { boundary, followed } : { followed };
    },
    async resume(caller, position) {
      const newest = await pagesSince(caller, position.boundary);
      const previous: ListState = {
        seen: new Map(position.followed.map(({ id, tag, at }) => [id, { tag, final: false, at }])),
        boundary: position.boundary,
      };
      return compare(caller, previous, newest, MAX_FOLLOWED);
    },
  };

  async function restOfWindow(
    caller: Caller,
    first: { items: readonly T[]; paging?: { totalCount: number } },
  ): Promise<T[]> {
    const size = source.inFlightWindow;
    if (!size || first.items.length < size) return [];
    const total = first.paging?.totalCount ?? MAX_WINDOW_PAGES * size;
    const pages = Math.min(MAX_WINDOW_PAGES, Math.ceil(total / size));
    const rest = await Promise.all(
      Array.from({ length: pages - 1 }, (_, i) =>
        source.list(caller, { page: i + 2, size, statusIn: [...source.inFlight] }),
      ),
    );
    return rest.flatMap((page) => page.items);
  }

  /** The records created since `boundary` and the newest one before, newest first; throws when too many. */
  async function pagesSince(caller: Caller, boundary: Position['boundary']): Promise<T[]> {
    const records: T[] = [];
    for (let page = 1; page <= RESUME_PAGES; page++) {
      const { items } = await source.list(caller, { page, size: RESUME_PAGE });
      records.push(...items);
      const last = items.at(-1);
      if (items.length < RESUME_PAGE || (boundary && last && !isNew(last, boundary))) return records;
    }
    throw notResumable(`more than ${RESUME_PAGES * RESUME_PAGE} records created since`);
  }
}
