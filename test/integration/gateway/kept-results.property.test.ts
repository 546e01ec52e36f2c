import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeptResults } from '../../../src/plugins/kept-results.ts';
import { SandboxStore } from '../../../src/sandbox/store/store.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { WITHDRAW, withdrawalBody, withdrawalInput } from '../../support/sandbox.ts';

/**
 * Keeping results changes no answer, as a property. Query deduplication keeps a query's result
 * while every REST answer it read stays in the micro-cache (src/plugins/query-deduplication.ts):
 * the claim is that executing the query again meanwhile would have answered exactly the same.
 *
 * Two gateways read one sandbox world on one clock, both with the micro-cache on: `kept` with its
 * defaults, `executed` with query deduplication off, so it executes every query. fast-check
 * generates histories of reads by two merchants' keys (four queries, their variables, a wallet
 * that exists or not, several identical reads at once), time passing around the TTL's edges,
 * withdrawals through the gateway (its invalidation, told to the other gateway as a fleet would),
 * and other writers: withdrawals straight on the REST API and new deposits, which no gateway
 * hears about. Every read through `kept` must answer what the same read through `executed` does.
 *
 * Seeded (KEPT_RESULTS_SEED: a number, or `random`; a fixed one by default) and bounded
 * (KEPT_RESULTS_RUNS, default 100, a few seconds). A failure prints the seed, path and shrunk history.
 */

const RUNS = Number(process.env.KEPT_RESULTS_RUNS ?? 100);
const SEED =
  process.env.KEPT_RESULTS_SEED === 'random' ? Date.now() : Number(process.env.KEPT_RESULTS_SEED ?? 20261124);
const TTL_MS = 1_000;

// Overlapping reads, so that one query's result is built from answers another query cached
// earlier: Balances and Payouts share the wallet list, Payouts and Overview the withdrawal list,
// Deposits and Overview the deposit list.
const QUERIES = [
  `query Balances { wallets(first: 5) { nodes { restId asset(currencyCode: "USDT") { balance { availableAmount lockedAmount } } } } }`,
  `query Payouts($first: Int) { wallets(first: 5) { nodes { restId asset(currencyCode: "USDT") { balance { availableAmount } } } } withdrawalIntents(first: $first) { totalCount nodes { amount status } } }`,
  `query Deposits($first: Int) { deposits(first: $first) { totalCount nodes { amount status wallet { restId } } } }`,
  `query Overview($first: Int) { withdrawalIntents(first: $first) { totalCount } deposits(first: $first) { totalCount } }`,
  `query Wallet($id: ID!) { wallet(id: $id) { restId assets { currencyCode balance { availableAmount } } } }`,
] as const;

type Who = 0 | 1;
type Step =
  | {
      do: 'read';
      who: Who;
      query: number;
      first: number;
      existing: boolean;
      missing: string;
      together: number;
    }
  /** One of the history's earlier reads once more (the `pick`-th, modulo their number). */
  | { do: 'again'; pick: number }
  | { do: 'wait'; ms: number }
  | { do: 'withdraw'; who: Who }
  | { do: 'direct'; who: Who }
  | { do: 'deposit'; who: Who };

/** Mostly the first merchant, so that writes often follow reads of the same key. */
const who = fc.constantFrom<Who>(0, 0, 0, 0, 0, 0, 0, 1);
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      do: fc.constant('read' as const),
      who,
      query: fc.constantFrom(0, 0, 1, 1, 2, 3, 3, 4),
      first: fc.constantFrom(1, 1, 1, 1, 1, 2),
      existing: fc.boolean(),
      missing: fc.uuid(),
      together: fc.constantFrom(1, 1, 3),
    }),
  },
  // What a kept result answers.
  { weight: 6, arbitrary: fc.record({ do: fc.constant('again' as const), pick: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      do: fc.constant('wait' as const),
      ms: fc.constantFrom(0, 300, 600, 999, 1_001),
    }),
  },
  { weight: 2, arbitrary: fc.record({ do: fc.constant('withdraw' as const), who }) },
  { weight: 2, arbitrary: fc.record({ do: fc.constant('direct' as const), who }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('deposit' as const), who }) },
);

let now = 1_000_000;
let kept: TestGateway;
let executed: TestGateway;
/** Reads `kept` answered with a kept result. */
let keptAnswers = 0;

beforeAll(async () => {
  const store = new SandboxStore();
  const upstream = { cacheTtlMs: TTL_MS, cacheMaxBytes: 64 * 1024 * 1024 };
  kept = await startTestGateway({ store, upstream, clock: () => now });
  executed = await startTestGateway({
    store,
    upstream,
    clock: () => now,
    config: { queryDeduplication: false },
  });
  // Only `kept` keeps results (`executed` runs without deduplication).
  const keptResult = KeptResults.prototype.get;
  KeptResults.prototype.get = function (this: KeptResults, key: string) {
    const found = keptResult.call(this, key);
    if (found) keptAnswers++;
    return found as never;
  };
});
afterAll(async () => {
  await kept?.close();
  await executed?.close();
});

describe('kept results', () => {
  it(
    'answer every read exactly as executing it again would',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 40, size: 'max' }), async (history) => {
          // A new world for each history, and long past anything cached by the one before.
          now += 60_000;
          const merchants = await Promise.all(
            [0, 1].map(async () => {
              const m = await kept.sandbox.world.merchant();
              const wallet = await kept.sandbox.world.wallet(m.id, { USDT: '1000', TRX: '10' });
              return { ...m, walletId: wallet.id as string };
            }),
          );
          const reads: Extract<Step, { do: 'read' }>[] = [];
          for (const planned of history) {
            const s = planned.do === 'again' ? reads[planned.pick % reads.length] : planned;
            if (!s) continue;
            if (s.do === 'wait') {
              now += s.ms;
              continue;
            }
            const m = merchants[s.who];
            if (!m) throw new Error('no merchant');
            if (s.do === 'direct') {
              const { status } = await kept.sandbox.call('POST', '/external/v1/withdrawal-intents', {
                key: m.key,
                body: withdrawalBody(m.walletId, { amount: '3.00' }),
              });
              expect(status).toBe(201);
            } else if (s.do === 'deposit') {
              await kept.sandbox.world.deposit(m.walletId, { amount: '5', status: 'pending' });
            } else if (s.do === 'withdraw') {
              const { body } = await kept.request(
                WITHDRAW,
                { input: withdrawalInput(m.walletId) },
                { key: m.key },
              );
              expect(body.data).toEqual({
                createWithdrawalIntent: { __typename: 'CreateWithdrawalIntentSuccess' },
              });
              // What the fleet's invalidation tells every other replica.
              executed.client.invalidateScope(executed.client.scopeOf(`Bearer ${m.key}`));
            } else {
              reads.push(s);
              const query = QUERIES[s.query] as string;
              const variables =
                s.query === 0
                  ? {}
                  : s.query === 4
                    ? { id: s.existing ? m.walletId : s.missing }
                    : { first: s.first };
              const answers = await Promise.all(
                Array.from({ length: s.together }, () => kept.request(query, variables, { key: m.key })),
              );
              const expected = await executed.request(query, variables, { key: m.key });
              expect(expected.body.errors).toBeUndefined();
              for (const answer of answers) {
                expect(answer.status).toBe(200);
                expect(answer.body).toEqual(expected.body);
              }
            }
          }
        }),
        { numRuns: RUNS, seed: SEED, verbose: 1 },
      );
      // The histories did exercise kept results (else the property would hold vacuously).
      expect(keptAnswers).toBeGreaterThan(RUNS);
    },
    // A hang guard, not a speed test: about 15 s alone, more than twice that beside a CPU hog.
    120_000 + RUNS * 1_000,
  );
});
