import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import type { GatewayContext } from '../../../src/context.ts';
import { useEagerStringify } from '../../../src/plugins/eager-stringify.ts';
import { KEPT_SHARE_PER_CALLER, KeptResults } from '../../../src/plugins/kept-results.ts';
import { ResultSharing, useQueryDeduplication } from '../../../src/plugins/query-deduplication.ts';
import { ResponseCache } from '../../../src/upstream/cache.ts';
import type { UpstreamResponse } from '../../../src/upstream/call.ts';
import { entryBytes, KEPT_RESULTS_SHARE, RequestReads } from '../../../src/upstream/reads.ts';

const ENVELOPE = JSON.stringify({ code: 'ok', message: 'ok', data: [] });
const ok = (): UpstreamResponse => ({ status: 200, text: ENVELOPE, json: JSON.parse(ENVELOPE) });
const notFound: UpstreamResponse = { status: 404, text: '{}', json: {} };
const newReads = () => new RequestReads();
let now = 0;

/**
 * A micro-cache and the kept results over it, as MerchantWalletClient and the gateway put them
 * together: `maxBytes` is the whole bound; the REST answers get `restBytes` of it (default: all
 * but the kept results' share).
 */
function cachesOf(ttlMs: number, maxBytes = 1_000_000, restBytes = maxBytes * (1 - KEPT_RESULTS_SHARE)) {
  const cache = new ResponseCache({
    ttlMs,
    maxBytes: restBytes,
    now: () => now,
    staggerJoiners: () => false,
  });
  const kept = new KeptResults({
    keptMaxBytes: Math.floor(maxBytes * KEPT_RESULTS_SHARE),
    ttlMs,
    now: () => now,
    isCurrent: (reads) => cache.isCurrent(reads),
  });
  return { cache, kept };
}

describe('kept results', () => {
  it('keeps a result until the first answer it read leaves the cache, and only one that read something', async () => {
    now = 10_000;
    const { cache, kept: results } = cachesOf(1_000);
    const kept = { result: { data: {} }, text: 'x'.repeat(100) };
    const read = newReads();
    await cache.get('scope', '/wallets', async () => ok(), read); // cached until 11,000
    now = 10_400;
    await cache.get('scope', '/deposits', async () => ok(), read); // cached until 11,400
    results.keep('scope', 'a', kept, read);
    results.keep('scope', 'nothing', kept, newReads()); // read no REST answer
    const uncached = newReads();
    await cache.get('scope', '/wallets/x', async () => notFound, uncached);
    results.keep('scope', 'uncached', kept, uncached);
    expect(results.get('a')).toMatchObject(kept);
    expect(results.get('nothing')).toBeUndefined();
    expect(results.get('uncached')).toBeUndefined();
    now = 11_000;
    expect(results.get('a')).toMatchObject(kept);
    now = 11_001;
    expect(results.get('a')).toBeUndefined();
    const off = cachesOf(0);
    const offRead = newReads();
    await off.cache.get('scope', '/wallets', async () => ok(), offRead);
    off.kept.keep('scope', 'a', kept, offRead);
    expect(off.kept.get('a')).toBeUndefined();
  });

  it('ends a kept result when an answer it read is evicted, even when that answer is fetched again', async () => {
    now = 70_000;
    const text = JSON.stringify({ code: 'ok', message: 'ok', data: 'x'.repeat(6_000) });
    const answer = async (): Promise<UpstreamResponse> => ({ status: 200, text, json: JSON.parse(text) });
    const rest = (path: string) => entryBytes(text, `scope:0:GET:${path}`);
    const kept = { result: { data: {} }, text: '{"data":{}}' };
    // A whole bound whose kept results' share holds the kept result (a caller may take a sixteenth),
    // and REST answers with room for the answer it read and one more: a third pushes out the oldest.
    const maxBytes = 1_000_000;
    const { cache, kept: results } = cachesOf(60_000, maxBytes, rest('/a') + rest('/b') + 10);
    const read = newReads();
    await cache.get('scope', '/a', answer, read);
    results.keep('scope', 'r', kept, read);
    await cache.get('scope', '/b', answer);
    expect(results.get('r')).toMatchObject(kept); // a hit refreshes what it read too: /b is oldest
    await cache.get('scope', '/c', answer); // pushes out /b
    expect(results.get('r')).toMatchObject(kept);
    // Without a hit in between, what a kept result read is older than the answers after it, and goes first.
    const small = JSON.stringify({ code: 'ok', message: 'ok', data: [] });
    const smallAnswer = async (): Promise<UpstreamResponse> => ({
      status: 200,
      text: small,
      json: JSON.parse(small),
    });
    const other = cachesOf(60_000, maxBytes, rest('/e') + rest('/f') + entryBytes(small, 'scope:0:GET:/e'));
    const again = newReads();
    await other.cache.get('scope', '/e', answer, again);
    other.kept.keep('scope', 's', kept, again);
    await other.cache.get('scope', '/f', answer);
    await other.cache.get('scope', '/g', answer); // pushes out /e, the oldest
    await other.cache.get('scope', '/e', smallAnswer); // /e again, a newer answer
    expect(other.kept.get('s')).toBeUndefined();
  });

  it('keeps nothing built from an answer too large to cache', async () => {
    const { cache, kept: results } = cachesOf(1_000, 1_000_000, 2_000);
    const read = newReads();
    const big = JSON.stringify({ code: 'ok', message: 'ok', data: 'x'.repeat(1_000) });
    await cache.get('scope', '/big', async () => ({ status: 200, text: big, json: JSON.parse(big) }), read);
    expect(read.currentUntil).toBe(Number.NEGATIVE_INFINITY);
    results.keep('scope', 'a', { result: {}, text: '{}' }, read);
    expect(results.get('a')).toBeUndefined();
  });

  it("holds one caller's kept results to its share of the bound per TTL, and keys count", async () => {
    now = 50_000;
    const kept = { result: { data: {} }, text: 'x'.repeat(1_000) };
    const oneResult = entryBytes(kept.text, 'k1');
    // A caller's share (a sixteenth of kept results' quarter of the bound) with room for one such
    // result and a little more.
    const { cache, kept: results } = cachesOf(
      1_000,
      Math.ceil((oneResult * 1.5) / (KEPT_SHARE_PER_CALLER * KEPT_RESULTS_SHARE)),
    );
    const reads = async (scope: string) => {
      const read = newReads();
      await cache.get(scope, '/wallets', async () => ok(), read);
      return read;
    };
    results.keep('acme', 'k1', kept, await reads('acme'));
    results.keep('acme', 'k2', kept, await reads('acme'));
    results.keep('globex', 'k3', kept, await reads('globex'));
    expect(results.get('k1')).toBeDefined();
    expect(results.get('k2')).toBeUndefined();
    expect(results.get('k3')).toBeDefined();
    now += 1_001; // the next window, and the cached read has expired
    results.keep('acme', 'k4', kept, await reads('acme'));
    expect(results.get('k4')).toBeDefined();
    // A long key counts: the same text under a key of 100 000 characters is over the share.
    const long = 'v'.repeat(100_000);
    now += 1_001;
    results.keep('acme', long, kept, await reads('acme'));
    expect(results.get(long)).toBeUndefined();
  });

  it('hold their own share of the bound: they never push out a REST answer, nor take more than the share', async () => {
    now = 90_000;
    const maxBytes = 400_000;
    const { cache, kept: results } = cachesOf(60_000, maxBytes);
    let fetches = 0;
    const fetch = async () => {
      fetches++;
      return ok();
    };
    // Each result within one caller's share (a sixteenth of the kept quarter).
    const kept = { result: { data: {} }, text: 'x'.repeat(1_000) };
    const oneResult = entryBytes(kept.text, 'scope-0 r');
    expect(oneResult).toBeLessThanOrEqual(maxBytes * KEPT_RESULTS_SHARE * KEPT_SHARE_PER_CALLER);
    // Far more kept results than the whole bound holds, from callers within their own shares.
    const callers = Math.ceil((3 * maxBytes) / oneResult);
    const read = newReads();
    await cache.get('scope', '/wallets', fetch, read);
    for (let i = 0; i < callers; i++) results.keep(`scope-${i}`, `scope-${i} r`, kept, read);
    await cache.get('scope', '/wallets', fetch);
    expect(fetches).toBe(1); // the answer they all read stayed cached, though none read it since
    let held = 0;
    for (let i = 0; i < callers; i++) if (results.get(`scope-${i} r`)) held++;
    expect(held).toBeGreaterThan(0);
    expect(held * oneResult).toBeLessThanOrEqual(maxBytes * KEPT_RESULTS_SHARE);
  });
});

describe('kept results through yoga.fetch', () => {
  /**
   * Query deduplication over kept results, as yoga.ts wires them (useEagerStringify before it), on
   * a tiny schema whose fields read a micro-cache as the loaders do: through the caller's reads.
   */
  function gateway() {
    const { cache, kept } = cachesOf(1_000);
    const counts = { executions: 0, fetches: 0 };
    const read = async (context: GatewayContext, path: string, status: number) => {
      counts.executions++;
      const answer = await cache.get(
        context.caller.scope,
        path,
        async () => {
          counts.fetches++;
          return status === 200 ? ok() : notFound;
        },
        context.caller.reads,
      );
      return `${answer.status}`;
    };
    const schema = createSchema<Record<string, unknown> & GatewayContext>({
      typeDefs: 'type Query { wallets: String missing: String constant: String }',
      resolvers: {
        Query: {
          wallets: (_root, _args, context) => read(context, '/wallets', 200),
          missing: (_root, _args, context) => read(context, '/wallets/x', 404),
          constant: () => {
            counts.executions++;
            return 'same';
          },
        },
      },
    });
    const yoga = createYoga<Record<string, unknown>, GatewayContext>({
      schema,
      logging: false,
      // The context parts deduplication reads: the key, and its Caller's scope and reads.
      context: ({ request }) => {
        const authorization = request.headers.get('authorization');
        return {
          authorization,
          caller: {
            authorization: authorization ?? '',
            scope: `scope of ${authorization}`,
            reads: newReads(),
          },
        } as unknown as GatewayContext;
      },
      plugins: [
        useEagerStringify(),
        useQueryDeduplication({
          generationScope: (context) =>
            context.authorization ? cache.generationScope(context.caller.scope) : null,
          sharing: new ResultSharing(kept),
        }),
      ],
    });
    const post = async (query: string, key = 'Bearer acme') => {
      const response = await yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: key },
        body: JSON.stringify({ query }),
      });
      return response.text();
    };
    return { counts, post };
  }

  it('answers the same query from the kept result while the REST answer it read is cached, not after', async () => {
    now = 100_000;
    const { counts, post } = gateway();
    const first = await post('{ wallets }');
    expect(JSON.parse(first)).toEqual({ data: { wallets: '200' } });
    now = 101_000;
    expect(await post('{ wallets }')).toBe(first);
    expect(counts).toEqual({ executions: 1, fetches: 1 });
    // Another key never gets it.
    expect(await post('{ wallets }', 'Bearer globex')).toBe(first);
    expect(counts).toEqual({ executions: 2, fetches: 2 });
    now = 101_001; // acme's REST answer has left the cache: the query executes again
    expect(await post('{ wallets }')).toBe(first);
    expect(counts).toEqual({ executions: 3, fetches: 3 });
  });

  it('keeps no result that read an answer the cache does not keep, nor one that read nothing', async () => {
    now = 200_000;
    const { counts, post } = gateway();
    await post('{ missing }');
    await post('{ missing }');
    expect(counts).toEqual({ executions: 2, fetches: 2 });
    await post('{ constant }');
    await post('{ constant }');
    expect(counts).toEqual({ executions: 4, fetches: 2 });
  });
});
