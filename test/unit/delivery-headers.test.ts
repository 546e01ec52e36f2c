import { describe, expect, it } from 'vitest';
import { negotiateCoding } from '../../src/plugins/compression.ts';
import { matches } from '../../src/plugins/conditional-get.ts';
import { addVary } from '../../src/shared/vary.ts';

describe('If-None-Match, weak comparison (RFC 9110, 13.1.2)', () => {
  const etag = 'W/"abc"';
  it.each([
    ['W/"abc"', true],
    ['"abc"', true],
    ['w/"abc"', true],
    ['W/"x", W/"abc"', true],
    [' W/"x" ,"abc" ', true],
    ['*', true],
    ['W/"abcd"', false],
    ['"ab"', false],
    ['', false],
  ])('%j → %s', (header, expected) => {
    expect(matches(header, etag)).toBe(expected);
  });
  it('no header matches nothing', () => expect(matches(null, etag)).toBe(false));
});

describe('Vary', () => {
  it('adds names once, case-insensitively, after those there', () => {
    const headers = new Headers({ vary: 'Origin, accept-encoding' });
    addVary(headers, 'Accept-Encoding', 'Authorization', 'Accept');
    expect(headers.get('vary')).toBe('Origin, accept-encoding, Authorization, Accept');
  });
  it('leaves `*` alone, and sets a new header', () => {
    const star = new Headers({ vary: '*' });
    addVary(star, 'Accept-Encoding');
    expect(star.get('vary')).toBe('*');
    const none = new Headers();
    addVary(none, 'Accept-Encoding');
    expect(none.get('vary')).toBe('Accept-Encoding');
  });
});

describe('Accept-Encoding negotiation', () => {
  it.each([
    [null, 'identity', 'identity'],
    ['', 'identity', 'identity'],
    ['gzip, br', 'br', 'gzip'],
    ['br;q=0.9, gzip', 'gzip', 'gzip'],
    ['br, gzip;q=0.9', 'br', 'gzip'],
    ['br', 'br', 'identity'],
    ['*', 'br', 'gzip'],
    ['*;q=0', 'identity', 'identity'],
    ['identity;q=0', 'identity', 'identity'],
    ['identity, gzip;q=0.5', 'identity', 'identity'],
    ['gzip;q=0.5, identity;q=0.5', 'gzip', 'gzip'],
    ['x-gzip', 'gzip', 'gzip'],
    ['gzip;q=2', 'identity', 'identity'],
    ['gzip;q=abc, br', 'br', 'identity'],
  ] as const)('%j → single %s, stream (gzip only) %s', (header, single, stream) => {
    expect(negotiateCoding(header)).toBe(single);
    expect(negotiateCoding(header, ['gzip'])).toBe(stream);
  });
});
