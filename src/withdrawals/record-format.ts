import type { Attempt, IdempotencyRecord } from './idempotency-store.ts';

/**
 * The format of the withdrawal records a fleet shares in Redis (key records and payout attempts,
 * as JSON), so that two releases can run side by side on one Redis during a rolling deploy.
 *
 * Every JSON record this release writes carries `v: RECORD_FORMAT`. A record without `v` was
 * written by 0.1.0 and is format 1, the same as this release's. A record of a format this release
 * does not know (a newer release's, or a state it has never heard of) is never guessed at: the
 * withdrawal that meets it is refused unsent (IDEMPOTENCY_UNAVAILABLE, reason
 * RECORD_FORMAT_UNKNOWN), and a replica of the newer release answers the retry.
 *
 * The rules for changing a record (docs/upgrading.md): a release reads the previous release's
 * records, and writes only records the previous release reads; a change the previous release
 * cannot read is staged over two releases (first one that reads the new format, then one that
 * writes it) and bumps RECORD_FORMAT. Key names are part of the format: renaming one is such a
 * change (a replica that looks under another name reads a claimed key as free). The fleet test
 * `store-format.test.ts` pins every key and field this release writes.
 */
export const RECORD_FORMAT = 1;

/** The states of a key record this release knows how to replay or take over. */
const STATES = new Set<string>(['pending', 'succeeded', 'refused']);

/** A record written in a format this release cannot read: the withdrawal is refused unsent. */
export class UnknownRecordFormatError extends Error {
  readonly format: unknown;

  constructor(what: string, format: unknown) {
    super(
      `the ${what} was written by a newer release of the gateway (record format ${String(format)}; this release reads formats up to ${RECORD_FORMAT})`,
    );
    this.name = 'UnknownRecordFormatError';
    this.format = format;
  }
}

/** Whether `v` (absent: 0.1.0's format 1) is a format this release reads. */
function known(v: unknown): boolean {
  return v === undefined || (Number.isInteger(v) && (v as number) >= 1 && (v as number) <= RECORD_FORMAT);
}

/**
 * A key record from its stored JSON, exactly as stored (a record without `v` keeps none: the
 * fenced writes compare what they expect with the stored text, so it must stringify back to it).
 */
export function readKeyRecord(json: string): IdempotencyRecord {
  const record = JSON.parse(json) as IdempotencyRecord & { v?: unknown };
  if (!known(record.v)) throw new UnknownRecordFormatError('idempotency record', record.v);
  if (!STATES.has(record.state)) {
    throw new UnknownRecordFormatError(
      'idempotency record',
      `${String(record.v ?? 1)}, state ${record.state}`,
    );
  }
  return record;
}

/** A payout attempt from its stored JSON, exactly as stored. */
export function readAttempt(json: string): Attempt {
  const attempt = JSON.parse(json) as Attempt & { v?: unknown };
  if (!known(attempt.v)) throw new UnknownRecordFormatError('payout attempt', attempt.v);
  return attempt;
}
