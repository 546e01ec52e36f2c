import type { IdempotencyRecord, Submission } from './idempotency-store.ts';

/**
 * The format of the withdrawal records a fleet shares in Redis (key records and payout submissions,
 * as JSON), carried as `v` by every record this release writes; a record without `v` is 0.1.0's,
 * format 1. A record this release cannot read is never guessed at (rule R10, docs/withdrawals.md);
 * the rules for changing the format, key names included, are docs/upgrading.md's, and the
 * upgrade test (test/e2e/upgrade.test.ts) pins every key and field.
 */
export const RECORD_FORMAT = 1;

/** A record this release cannot read: a newer release's, or one edited or corrupt (R10). */
export class UnknownRecordFormatError extends Error {
  readonly format: unknown;
  /** A newer release's record (a replica of it can answer), not an edited or corrupt one. */
  readonly newer: boolean;

  constructor(what: string, format: unknown, newer: boolean) {
    super(
      newer
        ? `the ${what} was written by a newer release of the gateway (record format ${String(format)}; this release reads formats up to ${RECORD_FORMAT})`
        : `the ${what} is not one any release of the gateway writes (${String(format)}): it was edited or is corrupt`,
    );
    this.name = 'UnknownRecordFormatError';
    this.format = format;
    this.newer = newer;
  }
}

/** The parsed JSON object of a stored record; throws for text no release writes. */
function parsed(json: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new UnknownRecordFormatError(what, 'not JSON', false);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new UnknownRecordFormatError(what, 'not an object', false);
  }
  const v = (value as { v?: unknown }).v;
  if (v !== undefined && !(Number.isInteger(v) && (v as number) >= 1)) {
    throw new UnknownRecordFormatError(what, `format ${JSON.stringify(v)}`, false);
  }
  if (typeof v === 'number' && v > RECORD_FORMAT) throw new UnknownRecordFormatError(what, v, true);
  return value as Record<string, unknown>;
}

const isText = (value: unknown) => typeof value === 'string';
/** A REST error code as the REST API writes them; a record whose code is not one is not a refusal. */
const isCode = (value: unknown) => typeof value === 'string' && /^[a-z][a-z0-9_.]{0,127}$/.test(value);
const isTime = (value: unknown) => typeof value === 'number' && Number.isFinite(value);

/** What each state of format 1 must hold beside `fingerprint` and `startedAt`. */
const STATE_FIELDS: Record<string, (record: Record<string, unknown>) => boolean> = {
  pending: (record) => record.attempt === undefined || isSubmission(record.attempt),
  succeeded: (record) => {
    const intent = record.intent as { id?: unknown } | null | undefined;
    return typeof intent === 'object' && intent !== null && isText(intent.id);
  },
  refused: (record) => isCode(record.code) && isText(record.message),
};

function isSubmission(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const submission = value as Record<string, unknown>;
  return (
    isText(submission.id) &&
    isText(submission.owner) &&
    isTime(submission.sentAt) &&
    isTime(submission.endsBy) &&
    (submission.endedAt === null || isTime(submission.endedAt))
  );
}

/**
 * A key record from its stored JSON, exactly as stored (without `v` if it had none): fenced writes
 * compare the stored text with what they expect. Throws UnknownRecordFormatError.
 */
export function readKeyRecord(json: string): IdempotencyRecord {
  const record = parsed(json, 'idempotency record');
  const fields = STATE_FIELDS[String(record.state)];
  if (!fields) {
    throw new UnknownRecordFormatError('idempotency record', `state ${String(record.state)}`, false);
  }
  if (!isText(record.fingerprint) || !isTime(record.startedAt) || !fields(record)) {
    throw new UnknownRecordFormatError(
      'idempotency record',
      `a ${String(record.state)} record without its fields`,
      false,
    );
  }
  return record as unknown as IdempotencyRecord;
}

/** A payout submission from its stored JSON, exactly as stored. */
export function readSubmission(json: string): Submission {
  const submission = parsed(json, 'payout attempt');
  if (!isSubmission(submission))
    throw new UnknownRecordFormatError('payout attempt', 'an attempt without its fields', false);
  return submission as unknown as Submission;
}
