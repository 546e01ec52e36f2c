import { describe, expect, it } from 'vitest';
import {
  RECORD_FORMAT,
  readKeyRecord,
  readSubmission,
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
    expect(JSON.stringify(readSubmission(stored))).toBe(stored);
    expect(readSubmission(JSON.stringify(attempt))).toEqual(attempt);
  });

  it('refuses a newer format, and says a replica of that release will answer', () => {
    for (const read of [
      () => readKeyRecord(JSON.stringify({ v: RECORD_FORMAT + 1, ...pending, state: 'queued' })),
      () => readSubmission(JSON.stringify({ v: RECORD_FORMAT + 1, ...attempt })),
    ]) {
      const error = refusal(read);
      expect(error?.newer).toBe(true);
      expect(error?.message).toContain('newer release');
    }
  });

  it.each<[string, string]>([
    ['a format no release writes', JSON.stringify({ v: '1', ...pending })],
    ['format 0', JSON.stringify({ v: 0, ...pending })],
    ['a fractional format', JSON.stringify({ v: 1.5, ...pending })],
    ['a null format', JSON.stringify({ v: null, ...pending })],
    ['a state no release writes', JSON.stringify({ ...pending, state: 'queued' })],
    ['no state', JSON.stringify({ fingerprint: 'f', startedAt: 1 })],
    ['a success without its intent', JSON.stringify({ ...pending, state: 'succeeded' })],
    ['a success with an empty intent', JSON.stringify({ ...pending, state: 'succeeded', intent: {} })],
    ['a refusal without its code', JSON.stringify({ ...pending, state: 'refused', message: 'm' })],
    // A code it does not know is replayed as WithdrawalRefusedError: only a REST-shaped one.
    [
      'a refusal with an empty code',
      JSON.stringify({ ...pending, state: 'refused', code: '', message: 'm' }),
    ],
    [
      'a refusal whose code is no REST code',
      JSON.stringify({ ...pending, state: 'refused', code: 'Not A Code!', message: 'm' }),
    ],
    ['a pending record with half an attempt', JSON.stringify({ ...pending, attempt: { id: 'a' } })],
    ['not JSON', '{"state":'],
    ['JSON null', 'null'],
    ['a JSON array', '[]'],
  ])('refuses %s as edited or corrupt, not as a newer release', (_, json) => {
    const error = refusal(() => readKeyRecord(json));
    expect(error?.newer).toBe(false);
    expect(error?.message).toContain('edited or is corrupt');
  });

  it('refuses an attempt without its fields', () => {
    expect(refusal(() => readSubmission(JSON.stringify({ id: 'a' })))?.newer).toBe(false);
    expect(refusal(() => readSubmission('null'))?.newer).toBe(false);
  });
});

/** The UnknownRecordFormatError `read` throws (the test fails when it throws nothing else). */
function refusal(read: () => unknown): UnknownRecordFormatError | undefined {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(UnknownRecordFormatError);
    return error as UnknownRecordFormatError;
  }
  expect.unreachable('the record was read');
}
