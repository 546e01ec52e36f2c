import { afterAll, beforeAll, expect, it } from 'vitest';
import { Money } from '../../../src/sandbox/money.ts';
import { SandboxStore } from '../../../src/sandbox/store/store.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';

// with the index ready, a status-filtered totalCount is priced as free but walks.
const KEY = 'mw_test_review_filter_key';
let gw: TestGateway;
let store: SandboxStore;
let quiet: string;
const start = Date.parse('2026-01-01T00:00:00.000Z');
const at = (i: number) => new Date(start + i * 1000).toISOString();

beforeAll(async () => {
  store = new SandboxStore();
  const merchant = store.createMerchant('M', null, at(0));
  store.createApiKey(merchant.id, 'test', 'read_write', KEY);
  quiet = store.createWallet(merchant.id, { USDT: new Money('100') }, at(0)).id;
  const busy = store.createWallet(merchant.id, { USDT: new Money('100') }, at(0)).id;
  for (let i = 0; i < 20_000; i++)
    store.createDeposit(i < 10 ? quiet : busy, {
      currencyCode: 'USDT',
      amount: new Money('10'),
      amountFee: new Money('0.1'),
      status: 'completed',
      createdAt: at(i + 1),
    });
  gw = await startTestGateway({ store, config: { queryLimits: { maxCost: 9_000 } } });
});
afterAll(() => gw.close());

it('a filtered totalCount once the index is ready is refused by cost, like an unindexed one', async () => {
  const q = (query: string) => gw.request(query, {}, { key: KEY });
  await q(`{ wallet(id: "${quiet}") { deposits(first: 10) { nodes { restId } } } }`);
  await gw.runtime.walletIndexing?.builds.idle();
  const plain = await q(`{ wallet(id: "${quiet}") { deposits(first: 10) { totalCount } } }`);
  expect(plain.body.errors).toBeUndefined();
  gw.resetCalls();
  const { body } = await q(
    `{ wallet(id: "${quiet}") { deposits(first: 10, status: [COMPLETED]) { totalCount } } }`,
  );
  const calls = gw.upstreamCalls().filter((c) => c.includes('/deposits'));
  // Either refused by its cost (it walks the filtered list) or cheap; it is neither.
  expect(body.errors?.[0]?.extensions?.code === 'QUERY_LIMIT_EXCEEDED' || calls.length <= 3).toBe(true);
});
