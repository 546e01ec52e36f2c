import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/errors.ts';
import {
  decodeAgeCursor,
  decodeCursor,
  encodeAgeCursor,
  encodeCursor,
  planPages,
  resolveWindow,
} from '../../src/schema/pagination.ts';

const cursor = (offset: number, scope = 'deposits|') => encodeCursor(scope, offset, `id-${offset}`);

describe('planPages', () => {
  it.each([
    [{ start: 0, end: 20 }, [{ page: 1, size: 20 }]],
    [{ start: 50, end: 100 }, [{ page: 2, size: 50 }]],
    [{ start: 10, end: 60 }, [{ page: 1, size: 60 }]],
    [{ start: 7, end: 17 }, [{ page: 1, size: 17 }]],
    [{ start: 41, end: 45 }, [{ page: 9, size: 5 }]],
    [{ start: 0, end: 1000 }, [{ page: 1, size: 1000 }]],
    [{ start: 5, end: 5 }, []],
  ])('covers %j with %j', (window, pages) => {
    expect(planPages(window)).toEqual(pages);
  });

  it('never needs more than two pages for any window of at most 1000, and always covers it exactly', () => {
    for (const start of [0, 1, 99, 999, 1000, 12_345, 99_999]) {
      for (const count of [1, 2, 7, 10, 50, 333, 999, 1000]) {
        const pages = planPages({ start, end: start + count });
        expect(pages.length).toBeLessThanOrEqual(2);
        const first = pages[0];
        const last = pages.at(-1);
        if (!first || !last) throw new Error('no pages');
        for (const p of pages) expect(p.size).toBeLessThanOrEqual(1000);
        expect((first.page - 1) * first.size).toBeLessThanOrEqual(start);
        expect(last.page * last.size).toBeGreaterThanOrEqual(start + count);
        if (pages.length === 2) expect(pages[1]?.page).toBe(first.page + 1);
      }
    }
  });

  it('uses one page in the common case of paging forward by a fixed size', () => {
    for (let start = 0; start < 500; start += 25)
      expect(planPages({ start, end: start + 25 })).toHaveLength(1);
  });
});

describe('resolveWindow', () => {
  it('follows the Relay algorithm for first/after and last/before', () => {
    const w = (args: Parameters<typeof resolveWindow>[1], total?: number) => {
      const resolved = resolveWindow('deposits|', args, total);
      return 'window' in resolved ? resolved.window : resolved;
    };
    expect(w({})).toEqual({ start: 0, end: 20 });
    expect(w({ first: 10 })).toEqual({ start: 0, end: 10 });
    expect(w({ first: 10, after: cursor(9) })).toEqual({ start: 10, end: 20 });
    expect(w({ last: 5, before: cursor(15) })).toEqual({ start: 10, end: 15 });
    expect(w({ last: 50, before: cursor(15) })).toEqual({ start: 0, end: 15 });
    expect(w({ first: 10, after: cursor(2), before: cursor(6) })).toEqual({ start: 3, end: 6 });
    expect(w({ last: 5 })).toEqual({ needsTotal: true });
    expect(w({ last: 5 }, 42)).toEqual({ start: 37, end: 42 });
    expect(w({ first: 0 })).toEqual({ start: 0, end: 0 });
  });

  it('names the cursor item to verify, and shifts the window once it was found elsewhere', () => {
    expect(resolveWindow('deposits|', { first: 10, after: cursor(9) })).toEqual({
      window: { start: 10, end: 20 },
      anchor: { offset: 9, id: 'id-9' },
    });
    expect(resolveWindow('deposits|', { first: 10, after: cursor(9) }, undefined, 3)).toEqual({
      window: { start: 13, end: 23 },
      anchor: { offset: 12, id: 'id-9' },
    });
    expect(resolveWindow('deposits|', { last: 5, before: cursor(15) }, undefined, 2)).toMatchObject({
      window: { start: 12, end: 17 },
    });
  });

  it.each([[{ first: 1001 }], [{ last: 1001 }], [{ first: -1 }], [{ first: 1.5 }]])(
    'rejects %j as BAD_USER_INPUT',
    (args) => {
      expect(() => resolveWindow('deposits|', args)).toThrow(GatewayError);
      try {
        resolveWindow('deposits|', args);
      } catch (error) {
        expect((error as GatewayError).code).toBe('BAD_USER_INPUT');
      }
    },
  );
});

describe('cursors', () => {
  it('round-trip within their scope', () => {
    expect(decodeCursor('deposits|pending', encodeCursor('deposits|pending', 123, 'a:b'), 'after')).toEqual({
      offset: 123,
      id: 'a:b',
    });
  });

  it('are refused in another scope, and when forged', () => {
    const foreign = encodeCursor('deposits|pending', 3, 'x');
    expect(() => decodeCursor('deposits|', foreign, 'after')).toThrow(/another connection or other filters/);
    for (const forged of [
      '',
      'abc',
      Buffer.from('c1:xx:-1').toString('base64url'),
      Buffer.from('c2:a:1').toString('base64url'),
    ]) {
      expect(() => decodeCursor('deposits|', forged, 'before')).toThrow(/not a cursor this API issued/);
    }
  });

  it('are refused by length first: the longest one issued (a 128-character REST id) passes', () => {
    const longest = encodeCursor('deposits|', 999_999_999, 'i'.repeat(128));
    expect(longest.length).toBeLessThanOrEqual(256);
    expect(decodeCursor('deposits|', longest, 'after').id).toBe('i'.repeat(128));
    expect(() => decodeCursor('deposits|', 'c'.repeat(257), 'after')).toThrow(
      'after must be at most 256 characters; received 257',
    );
  });

  it("a wallet list's cursors hold an age; a cursor of the other kind is from an earlier version", () => {
    const scope = 'wallet:w1:deposits|';
    expect(decodeAgeCursor(scope, encodeAgeCursor(scope, 41_999, 'd:1'), 'after')).toEqual({
      offset: 41_999,
      id: 'd:1',
    });
    // A wallet list's cursor from the release before ages (a position in the wallet's list).
    expect(() => decodeAgeCursor(scope, encodeCursor(scope, 3, 'd:1'), 'after')).toThrow(
      'after is a cursor from an earlier version of this connection; request the first page again',
    );
    expect(() => decodeCursor(scope, encodeAgeCursor(scope, 3, 'd:1'), 'before')).toThrow(/earlier version/);
    expect(() => decodeAgeCursor('wallet:w2:deposits|', encodeAgeCursor(scope, 3, 'd:1'), 'after')).toThrow(
      /another connection or other filters/,
    );
  });
});
