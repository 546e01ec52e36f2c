import { afterAll, beforeAll, expect, it } from 'vitest';
import { Money } from '../../../src/sandbox/money.ts';
import { SandboxStore } from '../../../src/sandbox/store/store.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';

// a walk that meets a micro-cached page older than its head ends early.
const KEY = 'mw_test_review_stale_key';
let gw: TestGateway;
let store: SandboxStore;
let quiet: string;
let busy: string;
const quietIds: string[] = [];
const start = Date.parse('2026-01-01T00:00:00.000Z');
const at = (i: number) => new Date(start + i * 1000).toISOString();
const dep = (walletId: string, i: number) =>
  store.createDeposit(walletId, {
    currencyCode: 'USDT',
    amount: new Money('10'),
    amountFee: new Money('0.1'),
    status: 'completed',
    createdAt: at(i + 1),
  }).id;

beforeAll(async () => {
  store = new SandboxStore();
  const merchant = store.createMerchant('M', null, at(0));
  store.createApiKey(merchant.id, 'test', 'read_write', KEY);
  quiet = store.createWallet(merchant.id, { USDT: new Money('100') }, at(0)).id;
  busy = store.createWallet(merchant.id, { USDT: new Money('100') }, at(0)).id;
  for (let i = 0; i < 10; i++) quietIds.unshift(dep(quiet, i));
  for (let i = 10; i < 3000; i++) dep(busy, i);
  gw = await startTestGateway({
    store,
    config: { walletIndex: { maxBytes: Number(process.env.REVIEW_MAXBYTES ?? 0) } },
    upstream: { cacheTtlMs: 60_000 },
  });
});
afterAll(() => gw.close());

it('a quiet wallet read after a merchant-wide page was cached and 5 deposits arrived', async () => {
  const q = async (query: string) => {
    const { body } = await gw.request(query, {}, { key: KEY });
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    return body.data as any;
  };
  const first = await q('{ deposits(first: 1000) { pageInfo { endCursor } } }');
  await q(`{ deposits(first: 1000, after: "${first.deposits.pageInfo.endCursor}") { nodes { id } } }`);
  for (let i = 3000; i < 3005; i++) dep(busy, i);
  gw.resetCalls();
  const data = await q(
    `{ wallet(id: "${quiet}") { deposits(first: 10) { pageInfo { hasNextPage } nodes { restId } } } }`,
  );
  expect(data.wallet.deposits.nodes.map((n: { restId: string }) => n.restId)).toEqual(quietIds);
});
