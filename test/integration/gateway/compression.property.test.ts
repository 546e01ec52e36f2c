import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActivityFeedDocument } from '../../generated/graphql.ts';
import { DEFAULTS, startTestGateway, type TestGateway } from '../../support/gateway.ts';

/**
 * Random Accept-Encoding headers (weights, unknown codings, `*`, `identity`, case, whitespace,
 * malformed weights) against answers of random sizes, below and above COMPRESSION_MIN_BYTES: the
 * decoded body is always the identity body, and the coding chosen is one the header allows
 * (RFC 9110, 12.5.3), compressed whenever brotli or gzip is acceptable, the body is large enough and
 * identity is not named with a higher weight.
 *
 * Seeded (COMPRESSION_SEED: a number, or `random`; a fixed one by default) and bounded
 * (COMPRESSION_RUNS headers, default 100, a few seconds). A failure prints the seed, path and
 * shrunk header.
 */

const RUNS = Number(process.env.COMPRESSION_RUNS ?? 100);
const SEED =
  process.env.COMPRESSION_SEED === 'random' ? Date.now() : Number(process.env.COMPRESSION_SEED ?? 20261126);
const FEED = print(ActivityFeedDocument);

let gw: TestGateway;
let key: string;
const identityBodies = new Map<number, string>();

beforeAll(async () => {
  gw = await startTestGateway();
  const m = await gw.sandbox.world.merchant();
  key = m.key;
  const walletId = (await gw.sandbox.world.wallet(m.id, { USDT: '50' })).id;
  for (let i = 1; i <= 25; i++) await gw.sandbox.world.deposit(walletId, { amount: String(i) });
});
afterAll(() => gw.close());

function feed(first: number, acceptEncoding: string | null) {
  return gw.gateway.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${key}`,
      ...(acceptEncoding !== null && { 'accept-encoding': acceptEncoding }),
    },
    body: JSON.stringify({ query: FEED, variables: { first } }),
  });
}

interface Entry {
  coding: string;
  q: string | null;
}

const coding = fc.oneof(
  fc.constantFrom('br', 'gzip', 'x-gzip', 'identity', '*', 'deflate', 'zstd', 'compress'),
  fc.constantFrom('BR', 'Gzip', 'IDENTITY', 'X-GZIP'),
  fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/),
);
const weight = fc.option(fc.constantFrom('0', '0.0', '0.001', '0.5', '0.999', '1', '1.000', '2', 'abc', ''), {
  nil: null,
});
const space = fc.constantFrom('', ' ', '  ', '\t');
const header = fc.option(
  fc
    .array(fc.record({ coding, q: weight, before: space, after: space, qSpace: space }), { maxLength: 6 })
    .map((entries) =>
      entries
        .map(
          (e) => `${e.before}${e.coding}${e.q === null ? '' : `${e.qSpace};${e.qSpace}q=${e.q}`}${e.after}`,
        )
        .join(','),
    ),
  { nil: null },
);

const VALID_WEIGHT = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/;

/** RFC 9110's weights, written independently of the gateway: entries with a malformed weight ignored. */
function weights(value: string | null) {
  const entries: Entry[] = [];
  for (const item of (value ?? '').split(',')) {
    const [name, ...params] = item.split(';');
    const codingName = (name ?? '').trim().toLowerCase();
    if (!codingName) continue;
    let q: string | null = null;
    for (const param of params) {
      const [k, v] = param.split('=');
      if ((k ?? '').trim().toLowerCase() === 'q') q = (v ?? '').trim();
    }
    if (q !== null && !VALID_WEIGHT.test(q)) continue;
    entries.push({ coding: codingName === 'x-gzip' ? 'gzip' : codingName, q: q ?? '1' });
  }
  const of = (name: string) => {
    const named = entries.find((e) => e.coding === name) ?? entries.find((e) => e.coding === '*');
    return named ? Number(named.q) : 0;
  };
  const identityNamed = entries.find((e) => e.coding === 'identity');
  return { br: of('br'), gzip: of('gzip'), identity: identityNamed ? Number(identityNamed.q) : null };
}

describe('compression, generatively', () => {
  it(
    'decodes to the identity body, in a coding the header allows',
    async () => {
      await fc.assert(
        fc.asyncProperty(header, fc.integer({ min: 0, max: 25 }), async (acceptEncoding, first) => {
          let identity = identityBodies.get(first);
          if (identity === undefined) {
            identity = await (await feed(first, null)).text();
            identityBodies.set(first, identity);
          }
          const response = await feed(first, acceptEncoding);
          const raw = Buffer.from(await response.arrayBuffer());
          const chosen = response.headers.get('content-encoding');
          const text = (
            chosen === 'br' ? brotliDecompressSync(raw) : chosen === 'gzip' ? gunzipSync(raw) : raw
          ).toString('utf8');
          expect(text).toBe(identity);
          expect(response.headers.get('vary')).toContain('Accept-Encoding');
          const w = weights(acceptEncoding);
          if (chosen === 'br') expect(w.br).toBeGreaterThan(0);
          if (chosen === 'gzip') expect(w.gzip).toBeGreaterThan(0);
          if (chosen === 'br' || chosen === 'gzip') {
            expect(w[chosen]).toBe(Math.max(w.br, w.gzip));
          }
          const best = Math.max(w.br, w.gzip);
          const large = Buffer.byteLength(identity) >= (DEFAULTS.compression?.minBytes ?? 0);
          const identityPreferred = w.identity !== null && w.identity > best;
          expect(chosen === null).toBe(best === 0 || !large || identityPreferred);
        }),
        { numRuns: RUNS, seed: SEED, verbose: 1 },
      );
    },
    60_000 + RUNS * 500,
  );
});
