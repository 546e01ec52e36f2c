import { encodeGlobalID } from '@pothos/plugin-relay';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Money } from '../../../src/sandbox/money.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { closeWithoutLeaks } from '../../support/leaks.ts';
import { withdrawalBody } from '../../support/sandbox.ts';

/**
 * Every field whose value needs its own upstream call fails alone: its siblings and its parent keep
 * their data, and the error names its path. Each case is run with the call behind the field
 * timing out, answering 503, and having its connection reset, while every other call succeeds.
 */

let gw: TestGateway;
let key: string;
let walletId: string;
let depositId: string;
let intentId: string;

closeWithoutLeaks(() => gw);
beforeAll(async () => {
  // Without wallet indexes: a wallet's totalCount then walks the merchant's list, the call that fails
  // here (with one, it is answered from the index; test/integration/gateway/wallet-index.test.ts).
  // A timeout far above any answer of a busy machine, so only the hanging call times out; short
  // enough for the 13 cases that wait for it.
  gw = await startTestGateway({
    upstream: { headersTimeoutMs: 1_000 },
    config: { walletIndex: { maxBytes: 0 } },
  });
  const merchant = await gw.sandbox.world.merchant();
  key = merchant.key;
  const wallet = await gw.sandbox.world.wallet(merchant.id, { USDT: '1000', TRX: '10' });
  walletId = wallet.id;
  // More than the scan's first page (250), so Wallet.deposits' totalCount needs a call of its own.
  for (let i = 0; i < 260; i++) {
    gw.sandbox.store.createDeposit(walletId, {
      currencyCode: 'USDT',
      amount: new Money('1'),
      amountFee: new Money('0'),
      status: 'completed',
    });
  }
  // The newest as the REST API orders them (many share a millisecond; ids break the tie).
  const newest = await gw.sandbox.call('GET', '/external/v1/deposits?size=1', { key });
  depositId = newest.body.data[0].id;
  const intent = await gw.sandbox.call('POST', '/external/v1/withdrawal-intents', {
    key,
    body: withdrawalBody(walletId),
  });
  intentId = intent.body.data.id;
});
beforeEach(() => gw.resetCalls());

const KINDS = {
  timeout: { fault: { hang: true }, code: 'UPSTREAM_TIMEOUT' },
  '503': { fault: { status: 503 }, code: 'UPSTREAM_UNAVAILABLE' },
  reset: { fault: { reset: true }, code: 'UPSTREAM_UNAVAILABLE' },
} as const;

interface Case {
  /** The field that fails, as the error's path. */
  path: (string | number)[];
  /** The path prefix of the upstream calls that fail (method GET). */
  calls: string;
  query: () => string;
  /** The answer's data with the failing field null. */
  data: () => Record<string, unknown>;
}

const CASES: Record<string, Case> = {
  'Query.wallets': {
    path: ['wallets'],
    calls: '/external/v1/wallets?',
    query: () =>
      '{ wallets(first: 3) { totalCount } deposits(first: 3) { totalCount } withdrawalIntents(first: 3) { totalCount } }',
    data: () => ({ wallets: null, deposits: { totalCount: 260 }, withdrawalIntents: { totalCount: 1 } }),
  },
  'Query.deposits': {
    path: ['deposits'],
    calls: '/external/v1/deposits?',
    query: () =>
      '{ wallets(first: 3) { totalCount } deposits(first: 3) { totalCount } withdrawalIntents(first: 3) { totalCount } }',
    data: () => ({ wallets: { totalCount: 1 }, deposits: null, withdrawalIntents: { totalCount: 1 } }),
  },
  'Query.withdrawalIntents': {
    path: ['withdrawalIntents'],
    calls: '/external/v1/withdrawal-intents?',
    query: () =>
      '{ wallets(first: 3) { totalCount } deposits(first: 3) { totalCount } withdrawalIntents(first: 3) { totalCount } }',
    data: () => ({ wallets: { totalCount: 1 }, deposits: { totalCount: 260 }, withdrawalIntents: null }),
  },
  'Query.wallet': {
    path: ['wallet'],
    calls: '/external/v1/wallets/',
    query: () => `{ wallet(id: "${walletId}") { restId } deposits(first: 1) { totalCount } }`,
    data: () => ({ wallet: null, deposits: { totalCount: 260 } }),
  },
  'Query.deposit': {
    path: ['deposit'],
    calls: '/external/v1/deposits/',
    query: () => `{ deposit(id: "${depositId}") { restId } wallets(first: 1) { totalCount } }`,
    data: () => ({ deposit: null, wallets: { totalCount: 1 } }),
  },
  'Query.withdrawalIntent': {
    path: ['withdrawalIntent'],
    calls: '/external/v1/withdrawal-intents/',
    query: () => `{ withdrawalIntent(id: "${intentId}") { restId } wallets(first: 1) { totalCount } }`,
    data: () => ({ withdrawalIntent: null, wallets: { totalCount: 1 } }),
  },
  'Query.node': {
    path: ['node'],
    calls: '/external/v1/deposits/',
    query: () =>
      `{ node(id: "${encodeGlobalID('Deposit', depositId)}") { id } wallets(first: 1) { totalCount } }`,
    data: () => ({ node: null, wallets: { totalCount: 1 } }),
  },
  'Wallet.deposits': {
    path: ['wallet', 'deposits'],
    calls: '/external/v1/deposits?',
    query: () =>
      `{ wallet(id: "${walletId}") { restId assets { currencyCode } deposits(first: 2) { nodes { restId } } withdrawalIntents(first: 2) { nodes { restId } } } }`,
    data: () => ({
      wallet: {
        restId: walletId,
        assets: [{ currencyCode: 'USDT' }, { currencyCode: 'TRX' }],
        deposits: null,
        withdrawalIntents: { nodes: [{ restId: intentId }] },
      },
    }),
  },
  'Wallet.withdrawalIntents': {
    path: ['wallet', 'withdrawalIntents'],
    calls: '/external/v1/withdrawal-intents?',
    query: () =>
      `{ wallet(id: "${walletId}") { restId deposits(first: 1) { nodes { restId } } withdrawalIntents(first: 2) { nodes { restId } } } }`,
    data: () => ({
      wallet: { restId: walletId, deposits: { nodes: [{ restId: depositId }] }, withdrawalIntents: null },
    }),
  },
  'Wallet.deposits.totalCount (a scan past the first page)': {
    path: ['wallet', 'deposits', 'totalCount'],
    calls: '/external/v1/deposits?page=2&size=250',
    query: () =>
      `{ wallet(id: "${walletId}") { restId deposits(first: 1) { nodes { restId } totalCount } } }`,
    data: () => ({
      wallet: { restId: walletId, deposits: { nodes: [{ restId: depositId }], totalCount: null } },
    }),
  },
  'Deposit.wallet': {
    path: ['deposits', 'nodes', 0, 'wallet'],
    calls: '/external/v1/wallets/',
    query: () => '{ deposits(first: 1) { nodes { restId wallet { address } } } }',
    data: () => ({ deposits: { nodes: [{ restId: depositId, wallet: null }] } }),
  },
  'WithdrawalIntent.wallet': {
    path: ['withdrawalIntents', 'nodes', 0, 'wallet'],
    calls: '/external/v1/wallets/',
    query: () => '{ withdrawalIntents(first: 1) { nodes { restId wallet { address } } } }',
    data: () => ({ withdrawalIntents: { nodes: [{ restId: intentId, wallet: null }] } }),
  },
};

describe.each(Object.entries(CASES))('%s fails alone', (_field, c) => {
  it.each(Object.entries(KINDS))('when its call %s', async (_kind, { fault, code }) => {
    await gw.sandbox.admin('POST', '/faults', { method: 'GET', path: c.calls, ...fault });
    const { status, body } = await gw.request(c.query(), {}, { key });
    expect(status).toBe(200);
    expect(body.data).toEqual(c.data());
    expect(body.errors).toHaveLength(1);
    expect(body.errors?.[0]).toMatchObject({ path: c.path, extensions: { code } });
    // The failing calls were made (the fault was really in the way), and only those failed.
    const failed = gw.sandbox.sandbox.requests.filter((r) => r.path.startsWith(c.calls));
    expect(failed.length).toBeGreaterThan(0);
  });
});
