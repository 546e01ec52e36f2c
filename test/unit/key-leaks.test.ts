import { describe, expect, it } from 'vitest';
import { findKeyLeaks } from '../support/key-leaks.ts';

// The suite-wide key scan (test/global-setup.ts) is only as good as this matcher.
describe('findKeyLeaks', () => {
  const log = (text: string) => [{ name: 'logs-1.log', text }];

  it('finds a recorded key anywhere in a line, with file and line number', () => {
    const text = '{"msg":"ok"}\n{"msg":"upstream said","detail":"key=secret-key-42 refused"}';
    expect(findKeyLeaks(log(text), ['secret-key-42'])).toEqual([
      { file: 'logs-1.log', line: 2, match: 'secret-key-42' },
    ]);
  });

  it('finds sandbox-shaped keys and unredacted Bearer credentials it was not told about', () => {
    const text = 'a mw_sandbox_f00dfeed here\n{"authorization":"Bearer abc.def"}';
    expect(findKeyLeaks(log(text), []).map((l) => l.match)).toEqual([
      'mw_sandbox_f00dfeed',
      'Bearer abc.def',
    ]);
  });

  it('accepts redacted headers and text without keys', () => {
    const text = '{"req":{"headers":{"authorization":"[redacted]"}}}\n{"msg":"Bearer [redacted]"}';
    expect(findKeyLeaks(log(text), ['secret-key-42'])).toEqual([]);
  });

  it('ignores recorded keys too short to search for without false alarms', () => {
    expect(findKeyLeaks(log('status 401 for "x"'), ['x', ''])).toEqual([]);
  });
});
