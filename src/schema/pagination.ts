import { createHash } from 'node:crypto';
import { quoted } from '../errors/echoes.ts';
import { badUserInput } from '../errors/errors.ts';
import { INPUT_LIMITS } from './input-limits.ts';

/** Relay connection arguments over the REST API's page/size lists (docs/ids-and-connections.md). */

/** The REST API's largest page, and so the largest window one connection field may ask for. */
export const MAX_PAGE_SIZE = 1000;
/** Window size when neither `first` nor `last` is given. */
export const DEFAULT_WINDOW = 20;

export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/** A half-open range of list positions, newest first: [start, end). */
export interface Window {
  start: number;
  end: number;
}

export interface PageRequest {
  page: number;
  size: number;
}

const CURSOR_VERSION = 'c2';

/** Where a cursor points: the item's position when it was issued, and the item itself. */
export interface CursorAnchor {
  offset: number;
  id: string;
}

/**
 * An opaque cursor: a version, a hash of the connection's scope (list and filters: another's does not
 * decode), the item's position, and its id (to find it again once the list moved).
 */
export function encodeCursor(scope: string, offset: number, id: string): string {
  return Buffer.from(`${CURSOR_VERSION}:${scopeHash(scope)}:${offset}:${id}`).toString('base64url');
}

/**
 * The version of a wallet list's cursors, which hold the item's age in the merchant's list
 * (loaders/wallet-index.ts) in place of a position; neither kind is taken for the other.
 */
const AGE_CURSOR_VERSION = 'a1';

export function encodeAgeCursor(scope: string, age: number, id: string): string {
  return Buffer.from(`${AGE_CURSOR_VERSION}:${scopeHash(scope)}:${age}:${id}`).toString('base64url');
}

/** The age a wallet list's cursor holds (and its item's id). */
export function decodeAgeCursor(scope: string, cursor: string, argument: 'after' | 'before'): CursorAnchor {
  return decodeVersioned(scope, cursor, argument, AGE_CURSOR_VERSION);
}

export function decodeCursor(scope: string, cursor: string, argument: 'after' | 'before'): CursorAnchor {
  return decodeVersioned(scope, cursor, argument, CURSOR_VERSION);
}

function decodeVersioned(
  scope: string,
  cursor: string,
  argument: 'after' | 'before',
  expected: string,
): CursorAnchor {
  // By length before decoding: no cursor this API issues is longer.
  if (cursor.length > INPUT_LIMITS.cursor) {
    throw badUserInput(
      `${argument} must be at most ${INPUT_LIMITS.cursor} characters; received ${cursor.length}`,
      [argument],
    );
  }
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const [version, hash, offsetText, ...idParts] = text.split(':');
  const id = idParts.join(':');
  if (
    version !== expected &&
    (version === CURSOR_VERSION || version === AGE_CURSOR_VERSION) &&
    hash === scopeHash(scope)
  ) {
    // This connection's cursor from the release before wallet lists kept their place by age.
    throw badUserInput(
      `${argument} is a cursor from an earlier version of this connection; request the first page again`,
      [argument],
    );
  }
  if (version !== expected || !offsetText || !/^\d{1,9}$/.test(offsetText) || !id) {
    throw badUserInput(`${argument} is not a cursor this API issued: ${quoted(cursor)}`, [argument]);
  }
  if (hash !== scopeHash(scope)) {
    throw badUserInput(
      `${argument} is a cursor from another connection or other filters; request the first page again`,
      [argument],
    );
  }
  return { offset: Number(offsetText), id };
}

const scopeHashes = new Map<string, string>();

/** Memoised: every edge of a connection needs it. Scopes are few (lists × filters × wallets). */
function scopeHash(scope: string): string {
  let hash = scopeHashes.get(scope);
  if (hash === undefined) {
    if (scopeHashes.size >= 10_000) scopeHashes.clear();
    hash = createHash('sha256').update(scope).digest('base64url').slice(0, 10);
    scopeHashes.set(scope, hash);
  }
  return hash;
}

/**
 * The window the arguments ask for, by the Relay spec's algorithm. `total` is needed only for `last`
 * without `before` (else `needsTotal`); `shift` moves the cursors' positions once their item was found
 * elsewhere; `anchor` is the cursor's item (after, else before) to look for at its expected position.
 */
export function resolveWindow(
  scope: string,
  args: ConnectionArgs,
  total?: number,
  shift = 0,
): { window: Window; anchor: CursorAnchor | null } | { needsTotal: true } {
  const first = checkCount(args.first, 'first');
  const last = checkCount(args.last, 'last');
  const after = args.after ? decodeCursor(scope, args.after, 'after') : null;
  const before = args.before ? decodeCursor(scope, args.before, 'before') : null;
  let start = after ? after.offset + shift + 1 : 0;
  let end = before ? before.offset + shift : Number.POSITIVE_INFINITY;
  if (total !== undefined) end = Math.min(end, total);
  if (first === undefined && last === undefined) end = Math.min(end, start + DEFAULT_WINDOW);
  if (first !== undefined) end = Math.min(end, start + first);
  if (last !== undefined) {
    if (end === Number.POSITIVE_INFINITY) return { needsTotal: true };
    start = Math.max(start, end - last);
  }
  if (end < start) end = start;
  const anchor = after ?? before;
  return { window: { start, end }, anchor: anchor && { offset: anchor.offset + shift, id: anchor.id } };
}

export function checkCount(value: number | null | undefined, name: 'first' | 'last'): number | undefined {
  if (value === null || value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 0 || value > MAX_PAGE_SIZE) {
    throw badUserInput(`${name} must be an integer from 0 to ${MAX_PAGE_SIZE}; received ${value}`, [name]);
  }
  return value;
}

/**
 * The fewest REST pages (1-based) covering a window of at most MAX_PAGE_SIZE: one, of the smallest
 * size that holds it whole, whenever one does; else two consecutive pages of the window's size.
 */
export function planPages(window: Window): PageRequest[] {
  const count = window.end - window.start;
  if (count <= 0) return [];
  if (count > MAX_PAGE_SIZE) throw new RangeError(`window of ${count} exceeds ${MAX_PAGE_SIZE}`);
  const last = window.end - 1;
  for (let size = count; size <= MAX_PAGE_SIZE; size++) {
    if (Math.floor(window.start / size) === Math.floor(last / size)) {
      return [{ page: Math.floor(window.start / size) + 1, size }];
    }
  }
  const firstPage = Math.floor(window.start / count) + 1;
  return [
    { page: firstPage, size: count },
    { page: firstPage + 1, size: count },
  ];
}

/** Position of the first item of a REST page. */
export function pageOffset(request: PageRequest): number {
  return (request.page - 1) * request.size;
}
