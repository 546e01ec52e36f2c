import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPILE_AFTER_USES } from '../../../src/plugins/compiled-execution.ts';
import { KeptResults } from '../../../src/plugins/kept-results.ts';
import { SandboxStore } from '../../../src/sandbox/store/store.ts';
import { schema } from '../../../src/schema/index.ts';
import type { RunningServer } from '../../../src/server.ts';
import { DEFAULTS, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import {
  instantiate,
  isValid,
  type List,
  type NodeTypename,
  type RequestTemplate,
  requestTemplates,
  type WorldPools,
} from '../../support/generated-documents.ts';
import { EXTERNAL_TRON_ADDRESS, walletListFault, withdrawalBody } from '../../support/sandbox.ts';

/**
 * Every layer the gateway adds changes no answer, for any document: the reference is the usual
 * executor with sharing off (COMPILED_EXECUTION=false, QUERY_DEDUPLICATION=false,
 * UPSTREAM_CACHE_TTL_MS=0); the gateway with its defaults (compiled execution, query
 * deduplication and kept results, the micro-cache, loaders) must answer every request with the
 * same status and the same body: `data` with its field order, the same errors (their order aside:
 * the GraphQL spec leaves it open), and a code on every error.
 *
 * Documents are generated from the schema (test/support/generated-documents.ts) and sent by two
 * merchants of one still sandbox world, in a drawn order, under a drawn media type, and now and
 * then while the REST API misbehaves (a wallet list with items the gateway cannot render, deposit
 * lists that fail), so that field errors, null propagation and partial results are compared too. The defaults' gateway gets each one
 * COMPILE_AFTER_USES times with its clock moved past the micro-cache's TTL before each (so each
 * executes, interpreted, until it is compiled), once more (compiled), once at the same moment (the
 * kept result), and then, after the TTL, twice per merchant all at once (executions shared in
 * flight, never across keys). No answer may hold an id of the other merchant.
 *
 * Seeded (DIFFERENTIAL_SEED: a number, or `random`; a fixed one by default) and bounded
 * (DIFFERENTIAL_RUNS, default 300, about a minute; `npm run test:property` runs 3,000 on a fresh seed).
 * A failure prints the seed, the path and the shrunk document.
 */

const RUNS = Number(process.env.DIFFERENTIAL_RUNS ?? 300);
const SEED =
  process.env.DIFFERENTIAL_SEED === 'random' ? Date.now() : Number(process.env.DIFFERENTIAL_SEED ?? 20261126);
const TTL_MS = DEFAULTS.upstream.cacheTtlMs;

let now = 1_000_000;
/** A REST wallet as the list sends it, copied (with another id) into the faulty lists. */
const unrenderable = { template: {} as Record<string, unknown> };
let reference: TestGateway;
let defaults: TestGateway;
let defaultsServer: RunningServer | undefined;
const merchants: { key: string; pools: WorldPools; ids: Set<string> }[] = [];

beforeAll(async () => {
  const store = new SandboxStore();
  reference = await startTestGateway({
    store,
    config: { compiledExecution: false, queryDeduplication: false },
  });
  defaults = await startTestGateway({ store, upstream: { cacheTtlMs: TTL_MS }, clock: () => now });
  // Over a socket, as deployed: what the hot path (src/execution/hot-path.ts) takes up it answers there.
  defaultsServer = await defaults.runtime.listen({ port: 0, host: '127.0.0.1' });
  // Counts the answers a kept result gave, so the run can show it compared some.
  // Only `defaults` keeps results (`reference` runs without deduplication).
  const keptResult = KeptResults.prototype.get;
  KeptResults.prototype.get = function (this: KeptResults, key: string) {
    const found = keptResult.call(this, key);
    if (found) seen.kept++;
    return found as never;
  };
  for (let m = 0; m < 2; m++) merchants.push(await merchantWorld(reference));
  const listed = await reference.sandbox.call('GET', '/external/v1/wallets?size=1', {
    key: merchants[0]?.key,
  });
  unrenderable.template = (listed.body as { data: Record<string, unknown>[] }).data[0] ?? {};
  // Another merchant's wallet, and an address of the platform's own wallets: both refused.
  for (const [m, merchant] of merchants.entries()) {
    const other = merchants[1 - m] as (typeof merchants)[number];
    const refused = merchant.pools.refusedInputs;
    refused.foreignWallet = { ...refused.foreignWallet, walletId: other.pools.own.Wallet.global[0] };
    const address = store.wallets.get(other.pools.own.Wallet.rest[1] ?? '')?.address;
    refused.destinationInternal = withdrawalInputFor(merchant.pools, {
      destination: { type: 'crypto', rail: 'tron', identifier: address },
      idempotencyKey: 'gen-internal',
    });
  }
}, 60_000);
afterAll(async () => {
  await defaultsServer?.close(1_000);
  await reference?.close();
  await defaults?.close();
});

/**
 * A merchant with three wallets, deposits in every status, withdrawal intents made on the REST
 * API and moved along, a daily limit of 50 USDT, and the pools of its ids and cursors, read
 * through the reference gateway.
 */
async function merchantWorld(gateway: TestGateway) {
  const { world } = gateway.sandbox;
  const merchant = await world.merchant({ fee: '1', dailyLimit: '50', monthlyLimit: '1000000' });
  const wallets = [];
  for (let w = 0; w < 3; w++) wallets.push(await world.wallet(merchant.id, { USDT: '1000', TRX: '10' }));
  for (const [w, wallet] of wallets.entries()) {
    for (let d = 0; d < 3 - w; d++) {
      const status = (['completed', 'pending', 'failed'] as const)[d];
      await world.deposit(wallet.id, { amount: `${w + d + 1}.25`, status });
    }
  }
  for (const [i, wallet] of wallets.slice(0, 2).entries()) {
    for (let n = 0; n < 2; n++) {
      const created = await gateway.sandbox.call('POST', '/external/v1/withdrawal-intents', {
        key: merchant.key,
        body: withdrawalBody(wallet.id, { amount: `${i + n + 2}.00` }),
      });
      if (created.status !== 201) throw new Error(`withdrawal: ${created.status} ${created.text}`);
      if (n === 1) await world.transitionWithdrawal(created.body.data.id, 'cancelled');
    }
  }
  const read = await gateway.request(
    `{ wallets(first: 10) { edges { cursor node { id restId
         deposits(first: 10) { edges { cursor } } withdrawalIntents(first: 10) { edges { cursor } } } } }
       deposits(first: 20) { edges { cursor node { id restId } } }
       withdrawalIntents(first: 20) { edges { cursor node { id restId } } } }`,
    {},
    { key: merchant.key },
  );
  if (read.body.errors) throw new Error(JSON.stringify(read.body.errors));
  type Edges = { edges: { cursor: string; node: { id: string; restId: string } & Record<string, Edges> }[] };
  const data = read.body.data as Record<'wallets' | 'deposits' | 'withdrawalIntents', Edges>;
  const own = {} as WorldPools['own'];
  const cursors = {} as WorldPools['cursors'];
  const lists: [NodeTypename, List, Edges][] = [
    ['Wallet', 'Query.wallets', data.wallets],
    ['Deposit', 'Query.deposits', data.deposits],
    ['WithdrawalIntent', 'Query.withdrawalIntents', data.withdrawalIntents],
  ];
  for (const [type, list, edges] of lists) {
    own[type] = { global: edges.edges.map((e) => e.node.id), rest: edges.edges.map((e) => e.node.restId) };
    cursors[list] = edges.edges.map((e) => e.cursor);
  }
  const first = data.wallets.edges[0]?.node;
  if (!first) throw new Error('no wallet');
  cursors['Wallet.deposits'] = (first.deposits as Edges).edges.map((e) => e.cursor);
  cursors['Wallet.withdrawalIntents'] = (first.withdrawalIntents as Edges).edges.map((e) => e.cursor);
  const pools: WorldPools = { own, cursors, refusedInputs: {} as WorldPools['refusedInputs'] };
  const other = (overrides: Record<string, unknown>) => withdrawalInputFor(pools, overrides);
  pools.refusedInputs = {
    balanceInsufficient: other({
      amount: '45.00',
      walletId: own.Wallet.global[2],
      idempotencyKey: 'gen-balance',
    }),
    foreignWallet: other({ walletId: 'replaced-below', idempotencyKey: 'gen-foreign' }),
    destinationInvalid: other({
      destination: { type: 'crypto', rail: 'tron', identifier: 'T-not-an-address' },
    }),
    destinationInternal: other({}),
    feeNotCovered: other({ amount: '0.50', serviceFeeMode: 'INCLUSIVE', idempotencyKey: 'gen-fee' }),
    dailyLimit: other({ amount: '60.00', idempotencyKey: 'gen-daily' }),
  };
  const ids = new Set([...Object.values(own).flatMap((p) => [...p.global, ...p.rest])]);
  return { key: merchant.key, pools, ids };
}

function withdrawalInputFor(pools: WorldPools, overrides: Record<string, unknown>) {
  return {
    walletId: pools.own.Wallet.global[0],
    serviceFeeMode: 'EXCLUSIVE',
    currencyCode: 'USDT',
    amount: '1.00',
    destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS },
    ...overrides,
  };
}

interface Answer {
  status: number;
  /** `data` as JSON text: field order is part of the answer. */
  data: string | undefined;
  /** Errors as JSON texts, sorted: their order is not. */
  errors: string[];
  /** The body's other members, as JSON text. */
  other: string;
}

/**
 * How a document is asked: which merchant first, which media type (statuses differ between
 * them), and what the REST API does meanwhile: nothing unusual, a wallet list with items the
 * gateway cannot render beside one with a `then` member, or deposit lists that fail.
 */
interface Setting {
  first: 0 | 1;
  accept: string;
  fault: 'none' | 'unrenderable wallets' | 'deposits fail';
}
const settings: fc.Arbitrary<Setting> = fc.record({
  first: fc.constantFrom<0 | 1>(0, 1),
  accept: fc.constantFrom('application/graphql-response+json', 'application/json'),
  // Half the documents meet a misbehaving REST API.
  fault: fc.constantFrom<Setting['fault']>(
    'none',
    'none',
    'none',
    'unrenderable wallets',
    'unrenderable wallets',
    'deposits fail',
  ),
});

async function send(
  gateway: TestGateway,
  request: ReturnType<typeof instantiate>,
  key: string,
  accept: string,
): Promise<Answer> {
  const over = gateway === defaults && defaultsServer ? fetch : gateway.gateway.fetch;
  const response = await over(
    `${gateway === defaults ? defaultsServer?.url : 'http://gateway.test'}/graphql`,
    {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept,
        authorization: `Bearer ${key}`,
      },
      body: JSON.stringify(request),
    },
  );
  const body = (await response.json()) as { data?: unknown; errors?: { extensions?: { code?: unknown } }[] };
  const { data, errors, ...rest } = body;
  return {
    status: response.status,
    data: data === undefined ? undefined : JSON.stringify(data),
    errors: (errors ?? []).map((e) => JSON.stringify(e)).sort(),
    other: JSON.stringify(rest),
  };
}

/** Every error carries a code (docs/errors.md), and the data holds none of `foreign`'s ids. */
function checkContract(answer: Answer, foreign: Set<string>, what: string): void {
  for (const error of answer.errors) {
    const code = (JSON.parse(error) as { extensions?: { code?: unknown } }).extensions?.code;
    if (typeof code !== 'string') throw new Error(`${what}: an error without extensions.code: ${error}`);
  }
  if (answer.data === undefined) return;
  for (const match of answer.data.matchAll(/"([^"\\]{8,})"/g)) {
    if (foreign.has(match[1] as string)) throw new Error(`${what}: another merchant's id ${match[1]}`);
  }
}

function same(answer: Answer, expected: Answer, what: string): void {
  expect(answer, what).toEqual(expected);
}

async function check(template: RequestTemplate, setting: Setting): Promise<void> {
  seen.documents++;
  if (!isValid(schema, template)) seen.invalid++;
  await injectFault(setting.fault);
  try {
    await compare(template, setting);
  } finally {
    for (const gateway of [reference, defaults]) await gateway.sandbox.admin('DELETE', '/faults');
  }
}

/** The fault of `setting` on both gateways' sandbox servers (one world, a server each). */
async function injectFault(fault: Setting['fault']): Promise<void> {
  if (fault === 'none') return;
  let injected: Record<string, unknown>;
  if (fault === 'deposits fail') {
    injected = { method: 'GET', path: '/external/v1/deposits', status: 500 };
  } else {
    // biome-ignore lint/suspicious/noThenProperty: what the REST API may send (src/shared/deep-freeze.ts drops it)
    const renderable = { ...unrenderable.template, id: 'f0000000-0000-4000-8000-000000000001', then: 'soon' };
    // Items the gateway cannot render first: a page of two already holds two failing items.
    const broken = (n: number) => ({ id: `f0000000-0000-4000-8000-00000000000${n}`, status: 'active' });
    const items = [broken(2), { id: 'f0000000-0000-4000-8000-000000000003' }, renderable, broken(4)];
    injected = walletListFault(items);
  }
  for (const gateway of [reference, defaults]) await gateway.sandbox.admin('POST', '/faults', injected);
}

async function compare(template: RequestTemplate, { first, accept }: Setting): Promise<void> {
  const asked: { request: ReturnType<typeof instantiate>; key: string; expected: Answer; m: number }[] = [];
  for (const [turn, m] of (first === 0 ? [0, 1] : [1, 0]).entries()) {
    const own = merchants[m];
    const other = merchants[1 - m];
    if (!own || !other) throw new Error('no merchants');
    const request = instantiate(template, own.pools, other.pools);
    const expected = await send(reference, request, own.key, accept);
    seen.answers++;
    if (expected.data !== undefined && expected.data !== 'null') seen.withData++;
    if (expected.errors.length > 0) seen.withErrors++;
    checkContract(expected, other.ids, 'reference');
    asked.push({ request, key: own.key, expected, m });
    // Executed each time (the micro-cache's answers have expired) until compiled on the last; the
    // second merchant's first execution is already compiled.
    for (let use = 1; use <= (turn === 0 ? COMPILE_AFTER_USES + 1 : 1); use++) {
      now += TTL_MS + 1;
      const answer = await send(defaults, request, own.key, accept);
      checkContract(answer, other.ids, `defaults, use ${use}`);
      same(answer, expected, `defaults, use ${use} (merchant ${m})`);
    }
    // The same moment: a kept result, when the last execution read cached answers.
    same(await send(defaults, request, own.key, accept), expected, `defaults, kept (merchant ${m})`);
  }
  // Both merchants at once, twice each, after the TTL: executions shared in flight, never across keys.
  now += TTL_MS + 1;
  const burst = [...asked, ...asked];
  const answers = await Promise.all(burst.map((one) => send(defaults, one.request, one.key, accept)));
  for (const [i, answer] of answers.entries()) {
    const one = burst[i] as (typeof burst)[number];
    same(answer, one.expected, `defaults, burst ${i} (merchant ${one.m})`);
  }
}

describe('the gateway with its defaults answers as the reference executor', () => {
  it('for documents generated from the schema', async () => {
    await fc.assert(fc.asyncProperty(requestTemplates(schema), settings, check), {
      numRuns: RUNS,
      seed: SEED,
    });
    // The generator must keep producing what this test is for: valid documents, most answered
    // with data, many compiled, many answered from a kept result, some failing.
    const compiled = defaults.logs.filter((line) => line.includes('"compiled":true')).length;
    expect(seen.invalid / seen.documents).toBeLessThan(0.05);
    expect(seen.withData / seen.answers).toBeGreaterThan(0.6);
    expect(seen.withErrors / seen.answers).toBeGreaterThan(0.1);
    expect(compiled / seen.documents).toBeGreaterThan(0.2);
    expect(seen.kept / seen.documents).toBeGreaterThan(0.2);
    // And many answered by the hot path, held to the reference like every other answer.
    expect((await hotPathServed()) / seen.documents).toBeGreaterThan(0.2);
  }, 600_000);
});

/**
 * What the run generated: documents, how many of them fail validation, the reference's answers,
 * and the defaults' answers that came from a kept result.
 */
const seen = { documents: 0, invalid: 0, answers: 0, withData: 0, withErrors: 0, kept: 0 };

/** Requests the defaults' hot path answered itself (gateway_hot_path_total{outcome="served"}). */
async function hotPathServed(): Promise<number> {
  const counted = await defaults.metrics.registry.getSingleMetric('gateway_hot_path_total')?.get();
  return counted?.values.find((sample) => sample.labels.outcome === 'served')?.value ?? 0;
}
