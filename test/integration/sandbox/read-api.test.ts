import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.ts';

const AMOUNT16 = /^\d+\.\d{16}$/;
const AMOUNT18 = /^\d+\.\d{18}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UNAUTHORIZED = { code: 'unauthorized', message: 'Unauthorized.', data: null };
const NOT_FOUND = { code: 'not_found', message: 'Not found.', data: null };

let sb: TestSandbox;
let acme: { id: string; key: string; readOnlyKey: string };
let other: { id: string; key: string; readOnlyKey: string };
let walletIds: string[];
let otherWalletId: string;
let otherDepositId: string;
let otherIntentId: string;

beforeAll(async () => {
  sb = await startTestSandbox();
  acme = await sb.world.merchant();
  other = await sb.world.merchant();
  walletIds = [];
  for (let i = 0; i < 3; i++) walletIds.push((await sb.world.wallet(acme.id)).id);
  for (let i = 0; i < 25; i++) {
    const status = ['completed', 'pending', 'processing', 'failed'][i % 4];
    await sb.world.deposit(walletIds[i % 3] as string, { amount: `${i + 1}.50`, amountFee: '0.25', status });
  }
  otherWalletId = (await sb.world.wallet(other.id)).id;
  otherDepositId = (await sb.world.deposit(otherWalletId, { amount: '5' })).id;
  const created = await sb.call('POST', '/external/v1/withdrawal-intents', {
    key: other.key,
    body: {
      senderWalletId: otherWalletId,
      serviceFeeMode: 'exclusive',
      currencyCode: 'USDT',
      amount: '1',
      destination: { type: 'crypto', rail: 'tron', identifier: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7' },
    },
  });
  otherIntentId = created.body.data.id;
});
afterAll(() => sb.close());

describe('resources and envelopes', () => {
  it('returns a wallet exactly in the spec shape', async () => {
    const { status, body } = await sb.call('GET', `/external/v1/wallets/${walletIds[0]}`, { key: acme.key });
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual(['code', 'message', 'data']);
    expect(body.code).toBe('ok');
    const wallet = body.data;
    expect(Object.keys(wallet).sort()).toEqual([
      'assets',
      'createdAt',
      'id',
      'networkEndpoint',
      'status',
      'updatedAt',
    ]);
    expect(wallet.status).toBe('active');
    expect(wallet.networkEndpoint).toEqual({
      type: 'blockchain',
      provider: 'tron',
      identifier: wallet.networkEndpoint.identifier,
      blockchainDetail: { chainId: '728126428', address: wallet.networkEndpoint.identifier },
    });
    expect(wallet.networkEndpoint.identifier).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    expect(wallet.createdAt).toMatch(TIMESTAMP);
    for (const asset of wallet.assets) {
      expect(Object.keys(asset).sort()).toEqual([
        'balance',
        'createdAt',
        'currencyCode',
        'nickname',
        'updatedAt',
      ]);
      expect(asset.balance.availableAmount).toMatch(AMOUNT16);
      expect(asset.balance.lockedAmount).toMatch(AMOUNT16);
    }
  });

  it('returns deposits with transaction legs at 18 digits and amounts at 16', async () => {
    const { body } = await sb.call('GET', '/external/v1/deposits?size=100', { key: acme.key });
    const deposit = body.data.find((d: { amount: string }) => d.amount === '25.5000000000000000');
    expect(deposit.wallet).toEqual({ id: expect.any(String), type: 'merchant_wallet' });
    expect(deposit.source).toEqual({ type: 'crypto', rail: 'tron', identifier: expect.any(String) });
    expect(deposit.transaction.type).toBe('blockchain');
    expect(deposit.transaction.provider).toBe('tron');
    expect(deposit.transaction.blockchain.chainId).toBe('728126428');
    expect(deposit.transaction.legs.map((l: { type: string }) => l.type)).toEqual([
      'principal',
      'network_fee',
    ]);
    for (const leg of deposit.transaction.legs) expect(leg.amount).toMatch(AMOUNT18);
    expect(deposit.amount).toBe('25.5000000000000000');
    expect(deposit.amountFee).toBe('0.2500000000000000');
    expect(deposit.amountNet).toBe('25.2500000000000000');
  });

  it('lists newest first with the paging object', async () => {
    const { body } = await sb.call('GET', '/external/v1/deposits?page=2&size=10', { key: acme.key });
    expect(body.paging).toEqual({ size: 10, page: 2, count: 10, limit: 10, totalCount: 25, totalPages: 3 });
    const all = await sb.call('GET', '/external/v1/deposits?size=1000', { key: acme.key });
    const order = all.body.data.map((d: { createdAt: string; id: string }) => `${d.createdAt}|${d.id}`);
    expect(order).toEqual([...order].sort().reverse());
  });

  it('serves the last page partially and a page past the end empty', async () => {
    const last = await sb.call('GET', '/external/v1/deposits?page=3&size=10', { key: acme.key });
    expect(last.body.paging).toMatchObject({ count: 5, totalCount: 25, totalPages: 3 });
    expect(last.body.data).toHaveLength(5);
    const past = await sb.call('GET', '/external/v1/deposits?page=4&size=10', { key: acme.key });
    expect(past.status).toBe(200);
    expect(past.body.data).toEqual([]);
    expect(past.body.paging).toEqual({
      size: 10,
      page: 4,
      count: 0,
      limit: 10,
      totalCount: 25,
      totalPages: 3,
    });
  });

  it('defaults to page 1, size 10 and accepts size 1000', async () => {
    const { body } = await sb.call('GET', '/external/v1/deposits', { key: acme.key });
    expect(body.paging).toMatchObject({ page: 1, size: 10, count: 10 });
    const max = await sb.call('GET', '/external/v1/wallets?size=1000', { key: acme.key });
    expect(max.status).toBe(200);
    expect(max.body.paging).toMatchObject({ size: 1000, count: 3, totalCount: 3, totalPages: 1 });
  });

  it.each([
    ['page=0', 'page must be a positive integer; received "0"'],
    ['size=0', 'size must be a positive integer; received "0"'],
    ['size=1001', 'size must be at most 1000; received 1001'],
    ['page=abc', 'page must be a positive integer; received "abc"'],
    ['size=1.5', 'size must be a positive integer; received "1.5"'],
    ['page=-1', 'page must be a positive integer; received "-1"'],
    ['colour=red', 'unknown query parameter "colour"; allowed: page, size'],
  ])('rejects %s with 400 bad_request', async (query, message) => {
    const { status, body } = await sb.call('GET', `/external/v1/wallets?${query}`, { key: acme.key });
    expect(status).toBe(400);
    expect(body).toEqual({ code: 'bad_request', message, data: null });
  });

  it('filters by statusIn and lists the allowed values on a bad one', async () => {
    const { body } = await sb.call('GET', '/external/v1/deposits?statusIn=pending,failed&size=100', {
      key: acme.key,
    });
    expect(new Set(body.data.map((d: { status: string }) => d.status))).toEqual(
      new Set(['pending', 'failed']),
    );
    expect(body.paging.totalCount).toBe(12);
    const bad = await sb.call('GET', '/external/v1/deposits?statusIn=completed,settled', { key: acme.key });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      code: 'bad_request',
      message:
        'statusIn must be a comma-separated list of: pending, processing, completed, failed; received "completed,settled"',
      data: null,
    });
    const intents = await sb.call('GET', '/external/v1/withdrawal-intents?statusIn=reviewing,completed', {
      key: acme.key,
    });
    expect(intents.status).toBe(200);
    const badIntent = await sb.call('GET', '/external/v1/withdrawal-intents?statusIn=done', {
      key: acme.key,
    });
    expect(badIntent.body.message).toContain('preparing, reviewing, pending, completed, failed, cancelled');
  });
});

describe('ids', () => {
  it('gives 400 for a malformed id and 404 for a well-formed unknown one', async () => {
    for (const resource of ['wallets', 'deposits', 'withdrawal-intents']) {
      const malformed = await sb.call('GET', `/external/v1/${resource}/not-a-uuid`, { key: acme.key });
      expect(malformed.status).toBe(400);
      expect(malformed.body.code).toBe('bad_request');
      const unknown = await sb.call('GET', `/external/v1/${resource}/00000000-0000-4000-8000-000000000000`, {
        key: acme.key,
      });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual(NOT_FOUND);
    }
  });

  it('never lets an encoded path reach another route', async () => {
    const { status, body } = await sb.call('GET', '/external/v1/wallets/..%2F..%2Fsandbox%2Fv1%2Fmerchants', {
      key: acme.key,
    });
    expect(status).toBe(400);
    expect(body.code).toBe('bad_request');
  });
});

describe('authentication and isolation', () => {
  it('answers missing, malformed, unknown and revoked keys with the same 401 body', async () => {
    const revoked = await sb.admin('POST', `/merchants/${acme.id}/api-keys`, {
      name: 'old',
      access: 'read_write',
    });
    await sb.admin('POST', `/api-keys/${revoked.id}/revoke`);
    const attempts = [
      await sb.call('GET', '/external/v1/wallets'),
      await sb.call('GET', '/external/v1/wallets', { headers: { authorization: `Basic ${acme.key}` } }),
      await sb.call('GET', '/external/v1/wallets', { headers: { authorization: 'Bearer' } }),
      await sb.call('GET', '/external/v1/wallets', { key: 'mw_sandbox_unknown' }),
      await sb.call('GET', '/external/v1/wallets', { key: revoked.key }),
    ];
    for (const attempt of attempts) {
      expect(attempt.status).toBe(401);
      expect(attempt.body).toEqual(UNAUTHORIZED);
    }
    expect(new Set(attempts.map((a) => a.text)).size).toBe(1);
  });

  it('lets a read-only key read but not create (403)', async () => {
    const read = await sb.call('GET', '/external/v1/wallets', { key: acme.readOnlyKey });
    expect(read.status).toBe(200);
    const write = await sb.call('POST', '/external/v1/withdrawal-intents', {
      key: acme.readOnlyKey,
      body: {},
    });
    expect(write.status).toBe(403);
    expect(write.body).toEqual({ code: 'forbidden', message: 'Forbidden.', data: null });
  });

  it("answers another merchant's ids exactly like nonexistent ones", async () => {
    for (const path of [
      `/external/v1/wallets/${otherWalletId}`,
      `/external/v1/deposits/${otherDepositId}`,
      `/external/v1/withdrawal-intents/${otherIntentId}`,
    ]) {
      const foreign = await sb.call('GET', path, { key: acme.key });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual(NOT_FOUND);
      const own = await sb.call('GET', path, { key: other.key });
      expect(own.status).toBe(200);
    }
  });

  it('scopes every list to the caller', async () => {
    const wallets = await sb.call('GET', '/external/v1/wallets', { key: other.key });
    expect(wallets.body.data.map((w: { id: string }) => w.id)).toEqual([otherWalletId]);
    const deposits = await sb.call('GET', '/external/v1/deposits', { key: other.key });
    expect(deposits.body.data.map((d: { id: string }) => d.id)).toEqual([otherDepositId]);
    const intents = await sb.call('GET', '/external/v1/withdrawal-intents', { key: acme.key });
    expect(intents.body.data).toEqual([]);
  });
});

describe('robustness', () => {
  it('answers unknown routes and methods in the error envelope', async () => {
    const route = await sb.call('GET', '/external/v1/nothing', { key: acme.key });
    expect(route.status).toBe(404);
    expect(route.body).toEqual(NOT_FOUND);
    const method = await sb.call('DELETE', '/external/v1/wallets', { key: acme.key });
    expect(method.status).toBe(405);
    expect(method.body).toEqual({ code: 'method_not_allowed', message: 'Method not allowed.', data: null });
  });

  it('refuses a body over the size cap with 413', async () => {
    const { status, body } = await sb.call('POST', '/external/v1/withdrawal-intents', {
      key: acme.key,
      rawBody: JSON.stringify({ pad: 'x'.repeat(70_000) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(status).toBe(413);
    expect(body.code).toBe('payload_too_large');
    expect(body.data).toBeNull();
  });
});
