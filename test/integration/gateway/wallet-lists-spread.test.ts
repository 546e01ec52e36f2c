import { afterAll, beforeAll, expect, it } from 'vitest';
import { Money } from '../../../src/sandbox/money.ts';
import { SandboxStore } from '../../../src/sandbox/store/store.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';

// a wallet whose items are spread one per 300 positions.
const KEY = 'mw_test_review_spread_key';
let gw: TestGateway;
let store: SandboxStore;
let spread: string;
const ids: string[] = [];
const start = Date.parse('2026-01-01T00:00:00.000Z');
const at = (i: number) => new Date(start + i * 1000).toISOString();

beforeAll(async () => {
  store = new SandboxStore();
  const merchant = store.createMerchant('M', null, at(0));
  store.createApiKey(merchant.id, 'test', 'read_write', KEY);
  spread = store.createWallet(merchant.id, { USDT: new Money('100') }, at(0)).id;
  const busy = store.createWallet(merchant.id, { USDT: new Money('100') }, at(0)).id;
  for (let i = 0; i < 40_000; i++) {
    const { id } = store.createDeposit(i % 300 === 0 ? spread : busy, {
      currencyCode: 'USDT',
      amount: new Money('10'),
      amountFee: new Money('0.1'),
      status: 'completed',
      createdAt: at(i + 1),
    });
    if (i % 300 === 0) ids.unshift(id);
  }
  gw = await startTestGateway({
    store,
    config: { walletIndex: { maxBytes: Number(process.env.REVIEW_MAXBYTES ?? 67108864) } },
  });
});
afterAll(() => gw.close());

it('first: 134 of a spread wallet: answered, with no more calls than a walk', async () => {
  const q = (query: string) => gw.request(query, {}, { key: KEY });
  const query = `{ wallet(id: "${spread}") { deposits(first: 134) { nodes { restId } } } }`;
  const walked = await q(query);
  expect(walked.body.errors, JSON.stringify(walked.body.errors)).toBeUndefined();
  await gw.runtime.walletIndexing?.builds.idle();
  gw.resetCalls();
  const { body } = await q(query);
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  expect((body.data as any).wallet.deposits.nodes.map((n: any) => n.restId)).toEqual(ids);
});
