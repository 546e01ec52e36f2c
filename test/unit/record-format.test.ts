import { describe, expect, it } from 'vitest';
import {
  RECORD_FORMAT,
  readAttempt,
  readKeyRecord,
  UnknownRecordFormatError,
} from '../../src/withdrawals/record-format.ts';

/** What a release reads of the records a fleet shares (docs/upgrading.md). */
describe('record formats', () => {
  const pending = { state: 'pending', fingerprint: 'f', startedAt: 1 };
  const attempt = { id: 'a', owner: 'key:s:k', sentAt: 1, endsBy: 2, endedAt: null };

  it("reads 0.1.0's records (no v) and this release's, exactly as stored", () => {
    for (const json of [JSON.stringify(pending), JSON.stringify({ v: RECORD_FORMAT, ...pending })]) {
      // The fenced writes compare the stored text with the record stringified again.
      expect(JSON.stringify(readKeyRecord(json))).toBe(json);
    }
    const stored = JSON.stringify({ v: RECORD_FORMAT, ...attempt });
    expect(JSON.stringify(readAttempt(stored))).toBe(stored);
    expect(readAttempt(JSON.stringify(attempt))).toEqual(attempt);
  });

  it.each([RECORD_FORMAT + 1, 0, 1.5, '1', null])('refuses a record of format %j', (v) => {
    expect(() => readKeyRecord(JSON.stringify({ v, ...pending }))).toThrow(UnknownRecordFormatError);
    expect(() => readAttempt(JSON.stringify({ v, ...attempt }))).toThrow(UnknownRecordFormatError);
  });

  it('refuses a state it does not know, and says which release wrote it', () => {
    const error = (() => {
      try {
        readKeyRecord(JSON.stringify({ ...pending, state: 'queued' }));
      } catch (caught) {
        return caught as Error;
      }
    })();
    expect(error).toBeInstanceOf(UnknownRecordFormatError);
    expect(error?.message).toContain('newer release');
    expect(error?.message).toContain('state queued');
  });
});
