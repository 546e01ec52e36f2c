import type { Caller } from '../upstream/caller.ts';
import { notResumable, versionTag } from './event-ids.ts';
import type { Feed, FeedKind, Position } from './feed.ts';

/**
 * A feed of all the records of one kind of one caller scope (withdrawal intents, deposits), read
 * from a REST list that is newest first (by creation), filters by status only and has no
 * "changed since". A subscriber is shown each record that appears or changes version after it
 * subscribed (nothing at first: the screen queried the list).
 *
 * A poll reads the NEWEST newest records, which holds every new record and most changes. A record
 * still in flight once it has left that page (older in-flight ones at subscribe time come from a
 * `statusIn` read) is followed too, up to MAX_TRACKED, the newest ones: one by one when it is
 * alone, else through one page of the in-flight records, and one by one only for those that left
 * it (they reached a final status). So a poll is one REST read, two while older records are in
 * flight, plus one per such record at the poll that sees it settle.
 *
 * A source may instead give an `inFlightWindow` (withdrawal intents do): then the feed follows
 * every record of the in-flight list (`statusIn` of the open statuses, newest first), however far
 * down the merchant's list, up to MAX_WINDOW_PAGES pages of that size. The first read reads all
 * those pages; then each poll reads the newest page and ONE page of the in-flight list, the next
 * in turn (page 1 after the last): where the previous page ended, found by counting the followed
 * records created since (records settled above it shift pages up: a page that begins past
 * followed records it should hold shows that, and the page before is read next). A followed
 * record within the range of creations a page covers but not on it settled or vanished: it alone
 * is read by id, the newest MAX_TRACKED such a poll (the others at the next poll). A record the
 * feed had not read (more than NEWEST created between two polls and already off the newest page)
 * is news when created after the boundary, else followed silently from then on. So a poll is two
 * REST reads, plus one per followed record at the poll that sees it settle; a record N pages down
 * the in-flight list is looked at every N-th poll (a status it held only between two looks is
 * missed, as between two polls of the newest page).
 *
 * Resuming from an event id (a Position: the newest record the subscriber knew of, and the
 * records in flight then with their versions) reads pages of RESUME_PAGE newest first until one
 * reaches that boundary, at most RESUME_PAGES of them (more is EVENT_ID_NOT_RESUMABLE: too far
 * behind), and the followed records that are not on them as a poll reads older ones. So a resume
 * is 1 to RESUME_PAGES list reads, plus one in-flight page and one read per followed record that
 * settled off those pages (at most MAX_FOLLOWED).
 */

/** The newest records read per poll; a merchant creating more than this many between two polls loses some news. */
const NEWEST = 50;
/** Records still in flight but no longer among the newest that a feed follows, at most. */
const MAX_TRACKED = 20;
/** The in-flight records read in one page when several older ones are followed. */
const IN_FLIGHT_PAGE = 100;
/** Records in flight an event id follows, at most (the newest page's and MAX_TRACKED older ones). */
export const MAX_FOLLOWED = NEWEST + MAX_TRACKED;
/** Pages of `inFlightWindow` in-flight records a feed follows, at most (read one a poll, in turn). */
const MAX_WINDOW_PAGES = 10;
/** Records read per page, and pages at most, when resuming. */
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
  /** What a subscriber is told about: a new version of a record is news. */
  version(value: T): string;
  /**
   * When given, the size of the in-flight page every poll reads (at most the REST API's page
   * size), and every in-flight record on it is followed; else the newest MAX_TRACKED older ones
   * that the feed knows of are, read as the header says.
   */
  inFlightWindow?: number;
}

/** What a list feed knows: per record, its version's tag, whether it is final and its creation; and the newest creation. */
export interface ListState {
  seen: Map<string, Seen>;
  boundary: { at: number; id: string } | undefined;
  /**
   * With an in-flight window: where the next poll's in-flight page begins, the creation of the
   * last record the previous page covered (and the page number itself when the estimate from it
   * missed); absent: page 1.
   */
  window?: { edge: number; page?: number };
}

/** A record as a list feed last saw it: its version's tag, whether it is final, and its creation (ms). */
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
   * With an in-flight window (`inFlightWindow` records a page): one page of the in-flight list,
   * the one that continues where the last one ended (`previous.window`). Answers the present
   * state of the in-flight records on it that are not among `onPage`, and of the followed records
   * (`followed`, oldest first) whose creation lies within the page's range but that are not on
   * it (they settled or vanished: read by id, the newest `maxReads` of them; the others are
   * `waiting`, for the next poll), oldest first, vanished ones left out; the followed records the
   * page says nothing of (`kept`, as they were); and where the next poll goes on.
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
    // The page after the in-flight records created at `edge` or since that the feed knows of (an
    // estimate: some may have settled unseen, then the page begins lower, which shows below).
    const newer =
      followed.filter(([, { at }]) => at >= edge).length +
      newest.filter((record) => !isFinal(record) && createdAtOf(record) >= edge).length;
    const number = cursor?.page ?? (cursor ? Math.floor(newer / size) + 1 : 1);
    const page = await source.list(caller, { page: number, size, statusIn: [...source.inFlight] });
    const items = page.items;
    const first = items[0];
    const last = items.at(-1);
    const more = items.length >= size && (!page.paging || number * size < page.paging.totalCount);
    // The range of creations the page covers: from its first record (page 1: all newer too) to
    // its last (the list's last page: all older too); an empty page past the first, none.
    const upper = number > 1 && first ? createdAtOf(first) : Number.POSITIVE_INFINITY;
    const lower = number > 1 && !first ? upper : more && last ? createdAtOf(last) : Number.NEGATIVE_INFINITY;
    // Records settled above it made this page begin below where the last one ended, past records
    // the feed follows: what lies between is read next, from the page before (what this page
    // shows holds all the same).
    const gap = number > 1 && (!first || followed.some(([, { at }]) => at > upper && at < edge));
    let next: ListState['window'];
    if (gap) next = { edge, page: number - 1 };
    else if (more && number < MAX_WINDOW_PAGES) next = { edge: lower };
    const found = new Set(items.map((record) => record.id));
    const covers = (at: number) => at >= lower && at <= upper;
    // Past the last page the feed reads (more than MAX_WINDOW_PAGES pages in flight): no longer followed.
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

  /**
   * From `previous` and the newest records `newest` (newest first): the records followed off
   * that page read again (the newest `bound` of them; with an in-flight window, one page of the
   * window and at most `bound` by id), what changed (oldest first), and the state now.
   */
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
    // Those not read this time stay as they were.
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
      // With an in-flight window, every page of it (up to MAX_WINDOW_PAGES) at once: a change
      // of a record the feed has not read yet could not be told from its first sight.
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

  /** With an in-flight window whose first page is `first`: the records on its other pages, up to MAX_WINDOW_PAGES. */
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

  /** The records created since `boundary` and the newest one before it, newest first; throws when too many. */
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
