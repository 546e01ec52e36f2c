import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { GatewayError } from '../errors/errors.ts';
import { INPUT_LIMITS } from '../schema/input-limits.ts';
import type { Feed, FeedKind, Position } from './feed.ts';

/**
 * Event ids: a subscriber's Position (feed.ts), carried in the id itself so that any replica, or
 * this one after a restart, can compute what changed since from the REST API. Layout, then
 * base64url: format, feed kind, a boundary flag, the boundary (creation ms, 6 bytes; REST id), the
 * followed count, each followed record's REST id, version tag (8 bytes) and creation (6 bytes), then
 * a 12-byte HMAC-SHA256 keyed by the caller's Authorization value. A REST id takes 17 bytes when
 * UUID-shaped, else its length plus one. Refused (EVENT_ID_NOT_RESUMABLE) when another key sends it,
 * altered, or of another format.
 */

const FORMAT = 1;
const KINDS: readonly FeedKind[] = ['withdrawal_intent', 'withdrawal_intents', 'deposits'];
const MAC_BYTES = 12;
const TAG_BYTES = 8;
/** More than any feed follows (list-feed.ts MAX_FOLLOWED). */
export const MAX_FOLLOWED_IN_ID = 100;
const MAX_ID_BYTES = 200;
/** Longer texts are refused unread (the argument is refused by length before this, feed.ts). */
const MAX_EVENT_ID_LENGTH = INPUT_LIMITS.eventId;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A record's version as an event id keeps it: 8 bytes of its SHA-256, base64url. */
export function versionTag(version: string): string {
  return createHash('sha256').update(version).digest().subarray(0, TAG_BYTES).toString('base64url');
}

export function encodeEventId(kind: FeedKind, position: Position, authorization: string): string {
  const parts: Buffer[] = [Buffer.from([FORMAT, KINDS.indexOf(kind), position.boundary ? 1 : 0])];
  if (position.boundary) parts.push(uint48(position.boundary.at), restId(position.boundary.id));
  const followed = position.followed.slice(-MAX_FOLLOWED_IN_ID);
  const count = Buffer.alloc(2);
  count.writeUInt16BE(followed.length);
  parts.push(count);
  for (const { id, tag, at } of followed) {
    parts.push(restId(id), Buffer.from(tag, 'base64url').subarray(0, TAG_BYTES), uint48(at));
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, mac(body, authorization)]).toString('base64url');
}

/** The position an event id holds; EVENT_ID_NOT_RESUMABLE unless it was sent to this key for this kind. */
export function decodeEventId(text: string, kind: FeedKind, authorization: string): Position {
  const bytes = text.length <= MAX_EVENT_ID_LENGTH ? Buffer.from(text, 'base64url') : Buffer.alloc(0);
  if (bytes.length <= MAC_BYTES || bytes.toString('base64url') !== text) throw notResumable('malformed');
  const body = bytes.subarray(0, -MAC_BYTES);
  if (!timingSafeEqual(bytes.subarray(-MAC_BYTES), mac(body, authorization))) {
    throw notResumable('not sent to this API key');
  }
  // Signed by this key: written by encodeEventId, but maybe by another release.
  if (body[0] !== FORMAT) throw notResumable('an older or newer format');
  if (body[1] !== KINDS.indexOf(kind)) throw notResumable('from another subscription field');
  try {
    const reader = new Reader(body, 3);
    const boundary = body[2] === 1 ? { at: reader.uint48(), id: reader.restId() } : undefined;
    const count = reader.uint16();
    if (count > MAX_FOLLOWED_IN_ID) throw new RangeError('too many');
    const followed = Array.from({ length: count }, () => ({
      id: reader.restId(),
      tag: reader.bytes(TAG_BYTES).toString('base64url'),
      at: reader.uint48(),
    }));
    reader.end();
    return boundary ? { boundary, followed } : { followed };
  } catch {
    throw notResumable('malformed');
  }
}

export function notResumable(reason: string): GatewayError {
  return new GatewayError(
    'EVENT_ID_NOT_RESUMABLE',
    `Cannot resume from this event id (${reason}): query the current state and subscribe again without one.`,
    { extensions: { reason } },
  );
}

function mac(body: Buffer, authorization: string): Buffer {
  return createHmac('sha256', authorization)
    .update('mwg-event-id\0')
    .update(body)
    .digest()
    .subarray(0, MAC_BYTES);
}

function uint48(value: number): Buffer {
  const buffer = Buffer.alloc(6);
  buffer.writeUIntBE(Math.max(0, Math.min(value, 2 ** 48 - 1)), 0, 6);
  return buffer;
}

function restId(id: string): Buffer {
  if (UUID.test(id)) return Buffer.concat([Buffer.from([0]), Buffer.from(id.replaceAll('-', ''), 'hex')]);
  const text = Buffer.from(id, 'utf8');
  if (text.length === 0 || text.length > MAX_ID_BYTES)
    throw new RangeError(`REST id of ${text.length} bytes`);
  return Buffer.concat([Buffer.from([text.length]), text]);
}

class Reader {
  private readonly buffer: Buffer;
  private offset: number;

  constructor(buffer: Buffer, offset: number) {
    this.buffer = buffer;
    this.offset = offset;
  }

  bytes(length: number): Buffer {
    if (this.offset + length > this.buffer.length) throw new RangeError('truncated');
    const bytes = this.buffer.subarray(this.offset, this.offset + length);
    this.offset += length;
    return bytes;
  }

  uint16(): number {
    return this.bytes(2).readUInt16BE();
  }

  uint48(): number {
    return this.bytes(6).readUIntBE(0, 6);
  }

  restId(): string {
    const length = this.bytes(1)[0] ?? 0;
    if (length === 0) {
      const hex = this.bytes(16).toString('hex');
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    }
    return this.bytes(length).toString('utf8');
  }

  end(): void {
    if (this.offset !== this.buffer.length) throw new RangeError('trailing bytes');
  }
}

/** `values` (oldest first) as the updates sent to a subscriber at `position`, each with its event id. */
export function updatesFrom<T extends { id: string }>(
  feed: Pick<Feed<T, unknown>, 'kind' | 'advance'>,
  position: Position,
  values: readonly T[],
  authorization: string,
): { kind: 'update'; value: T; id: string }[] {
  let at = position;
  return values.map((value) => {
    at = feed.advance(at, value);
    return { kind: 'update', value, id: encodeEventId(feed.kind, at, authorization) };
  });
}
