import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPILE_AFTER_USES } from '../../../src/plugins/compiled-execution.ts';
import { SandboxStore } from '../../../src/sandbox/store/store.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';

/**
 * Hostile documents against compiled execution (src/plugins/compiled-execution.ts): each request
 * is sent until its document is compiled, and must be answered exactly as the usual executor
 * answers it (two gateways over one sandbox world, as in compiled-execution.test.ts), and must not
 * run anything but the schema's resolvers.
 */
let compiled: TestGateway;
let usual: TestGateway;
let key: string;
let walletId: string;

beforeAll(async () => {
  const store = new SandboxStore();
  compiled = await startTestGateway({ store, config: { compiledExecution: true } });
  usual = await startTestGateway({ store, config: { compiledExecution: false } });
  const merchant = await compiled.sandbox.world.merchant();
  key = merchant.key;
  const wallet = await compiled.sandbox.world.wallet(merchant.id);
  walletId = wallet.id;
  for (let n = 0; n < 3; n++) await compiled.sandbox.world.deposit(wallet.id, { amount: `${n + 1}.5` });
});
afterAll(async () => {
  await compiled?.close();
  await usual?.close();
});

/** Both gateways' answers; the compiling gateway's is its last, after the document compiled. */
async function both(query: string, variables: Record<string, unknown> = {}, as: string = key) {
  let last: { status: number; body: unknown } | undefined;
  for (let use = 0; use <= COMPILE_AFTER_USES; use++) {
    const { status, body } = await compiled.request(query, variables, { key: as });
    last = { status, body };
  }
  const b = await usual.request(query, variables, { key: as });
  return { compiled: last, usual: { status: b.status, body: b.body } };
}

// graphql-jit writes literal arguments into its generated code with JSON.stringify and then
// replaces its "magic" markers in that text: a string argument holding the date marker becomes
// `new Date(<rest of the string>)`, i.e. code. (graphql-jit 0.8.9, objectStringify in execution.js.)
const MAGIC_DATE = '__MAGIC_DATE__33a9e76d_02e0_4128_8e92_3530ad3da74d';
const MAGIC_NAN = '__MAGIC_NAN__57f286b9_4c20_487f_b409_79804ddcb4f8';
const MAGIC_INFINITY = '__MAGIC_PLUS_INFINITY__bb201c39_3333_4695_b4ad_7f1722e7aa7a';

describe('code injection through literal arguments', () => {
  it('a string argument never runs as code, even with a made-up key (no upstream check before it)', async () => {
    const g = globalThis as { __compiledExecutionInjected?: number };
    delete g.__compiledExecutionInjected;
    const query = `{ wallet(id: "${MAGIC_DATE}globalThis.__compiledExecutionInjected=(globalThis.__compiledExecutionInjected||0)+1") { id } }`;
    const { compiled: a, usual: b } = await both(query, {}, 'made-up-key-1234');
    expect(g.__compiledExecutionInjected).toBeUndefined();
    expect(a).toEqual(b);
  });

  it('the same through a mutation input (createWithdrawalIntent, a real key)', async () => {
    const g = globalThis as { __compiledExecutionInjected2?: number };
    delete g.__compiledExecutionInjected2;
    const query = `mutation { createWithdrawalIntent(input: { walletId: "${walletId}", serviceFeeMode: EXCLUSIVE, currencyCode: "USDT", amount: "999999999", destination: { type: "crypto", rail: "tron", identifier: "${MAGIC_DATE}globalThis.__compiledExecutionInjected2=1" } }) { __typename ... on UserError { code } } }`;
    const { compiled: a, usual: b } = await both(query);
    expect(g.__compiledExecutionInjected2).toBeUndefined();
    expect(a).toEqual(b);
  });

  it.each([
    ['NaN marker', `{ wallet(id: "${MAGIC_NAN}") { id } }`],
    ['Infinity marker', `{ deposits(first: 1, after: "${MAGIC_INFINITY}") { totalCount } }`],
    ['quotes and code', '{ wallet(id: "\\"); process.exit(1); //") { id } }'],
    ['backslashes, ${ and backticks', '{ wallet(id: "\\\\ ${process.exit(1)} `x` */ /*") { id } }'],
    ['line and paragraph separators', '{ wallet(id: "a\\u2028b\\u2029c\u2028d") { id } }'],
    ['a block string', '{ wallet(id: """ "); process.exit(1); // \\""" ${x} """) { id } }'],
  ])('%s: answered as the usual executor answers', async (_name, query) => {
    const { compiled: a, usual: b } = await both(query);
    expect(a).toEqual(b);
  });
});

describe('names chosen to collide with the generated code or Object.prototype', () => {
  it.each([
    ['__proto__ alias on a root field', '{ __proto__: wallets(first: 1) { totalCount } }'],
    ['__proto__ alias on a plain property', '{ wallets(first: 1) { nodes { __proto__: address } } }'],
    [
      '__proto__ alias on an object without resolver',
      '{ wallets(first: 1) { nodes { assets { __proto__: balance { availableAmount } currencyCode } } } }',
    ],
    [
      'constructor, toString, hasOwnProperty, valueOf aliases',
      '{ wallets(first: 1) { nodes { constructor: id toString: address hasOwnProperty: createdAt valueOf: id } } }',
    ],
    [
      'jit internal names as aliases',
      '{ __context: wallets(first: 1) { __executionContext: totalCount __parent: nodes { __safeMap: id __currentItem: address } } }',
    ],
    [
      'paths whose joined names collide (resolve infos keyed by a_b)',
      `{ wallets_nodes: deposits(first: 2) { nodes { id wallet { id } } } wallets(first: 2) { nodes { id } } }`,
    ],
    [
      'a field twice under different aliases, different arguments',
      '{ a: deposits(first: 1) { totalCount nodes { id } } b: deposits(first: 2) { nodes { id } } }',
    ],
    [
      'the same alias twice, merged selections',
      '{ d: deposits(first: 2) { nodes { id } } d: deposits(first: 2) { nodes { amount } pageInfo { hasNextPage } } }',
    ],
    [
      '__typename on a union and fragments on interfaces',
      'query { node(id: "x") { __typename ... on Node { id } } nodes(ids: []) { __typename } }',
    ],
  ])('%s', async (_name, query) => {
    const { compiled: a, usual: b } = await both(query);
    expect(a).toEqual(b);
  });

  it('@include/@skip with variables', async () => {
    const query =
      'query Q($a: Boolean!, $b: Boolean!) { wallets(first: 1) { nodes { id @include(if: $a) address @skip(if: $b) x: id @include(if: $b) } } }';
    for (const variables of [
      { a: true, b: true },
      { a: false, b: false },
      { a: true, b: false },
    ]) {
      const { compiled: a, usual: b } = await both(query, variables);
      expect(a).toEqual(b);
    }
  });
});

describe('the result of __proto__ aliases sets no prototype', () => {
  it('Object.prototype stays clean', async () => {
    await both('{ wallets(first: 1) { nodes { __proto__: assets { polluted: currencyCode } } } }');
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });
});

describe('a document cheap to send, dear to compile', () => {
  it('passes the gateway limits, and is never compiled', async () => {
    const wallet =
      'id address createdAt updatedAt assets { currencyCode nickname balance { availableAmount lockedAmount } } networkEndpoint { identifier provider type blockchainDetail { address chainId } }';
    const fragment = `fragment N on Node { ... on Wallet { ${wallet} } ... on Deposit { id amount wallet { ${wallet} } } ... on WithdrawalIntent { id amount wallet { ${wallet} } } }`;
    let fields = '';
    for (let i = 0; i < 20; i++) {
      fields += ` n${i}: nodes(ids: []) { ...N ... on Wallet { deposits(first: 0) { nodes { ...N wallet { ...N } } } } }`;
    }
    const query = `query Dear {${fields} } ${fragment}`;
    // With a made-up key and with a real one, past COMPILE_AFTER_USES: answered, never compiled
    // (over 200 fields once its fragments are expanded; it took over 100 ms to compile).
    for (const as of ['made-up-key-5678', key]) {
      for (let use = 0; use <= COMPILE_AFTER_USES; use++) {
        const { status, body } = await compiled.request(query, {}, { key: as });
        // No REST call is needed (no ids, empty windows), so even a made-up key gets its answer.
        expect(status).toBe(200);
        expect(body.errors).toBeUndefined();
      }
    }
    const decision = compiled.logs.find(
      (line) => line.includes('"operationName":"Dear"') && line.includes('"compiled":'),
    );
    expect(JSON.parse(decision ?? '{}')).toMatchObject({ compiled: false, why: 'more than 200 fields' });
  });
});

describe('micro-cache on, compiled: tenants stay apart, a withdrawal refreshes the balance', () => {
  it('two merchants interleaved never see each other; createWithdrawalIntent invalidates', async () => {
    const gw = await startTestGateway({ upstream: { cacheTtlMs: 60_000 } });
    try {
      const a = await gw.sandbox.world.merchant();
      const b = await gw.sandbox.world.merchant();
      const wa = await gw.sandbox.world.wallet(a.id, { USDT: '1000' });
      const wb = await gw.sandbox.world.wallet(b.id, { USDT: '500' });
      const query =
        '{ wallets(first: 5) { nodes { restId asset(currencyCode: "USDT") { balance { availableAmount } } } } }';
      const seen = (body: { data?: unknown }) =>
        (body.data as { wallets: { nodes: { restId: string }[] } }).wallets.nodes.map((n) => n.restId);
      for (let i = 0; i < 2 * COMPILE_AFTER_USES + 2; i++) {
        const [ra, rb] = await Promise.all([
          gw.request(query, {}, { key: i % 2 ? a.key : a.readOnlyKey }),
          gw.request(query, {}, { key: i % 3 ? b.key : b.readOnlyKey }),
        ]);
        expect(seen(ra.body)).toEqual([wa.id]);
        expect(seen(rb.body)).toEqual([wb.id]);
      }
      const balance = async () =>
        (
          (await gw.request(query, {}, { key: a.key })).body.data as {
            wallets: { nodes: { asset: { balance: { availableAmount: string } } }[] };
          }
        ).wallets.nodes[0]?.asset.balance.availableAmount;
      const before = await balance();
      const created = await gw.request(
        'mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename } }',
        {
          input: {
            walletId: wa.id,
            serviceFeeMode: 'EXCLUSIVE',
            currencyCode: 'USDT',
            amount: '10',
            destination: { type: 'crypto', rail: 'tron', identifier: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7' },
          },
        },
        { key: a.key },
      );
      expect(created.body.data).toEqual({
        createWithdrawalIntent: { __typename: 'CreateWithdrawalIntentSuccess' },
      });
      expect(await balance()).not.toEqual(before);
    } finally {
      await gw.close();
    }
  });
});
