import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS, seedWorld } from '../../../src/sandbox/seed.ts';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.ts';

let sb: TestSandbox;
let merchant: { id: string; key: string };
beforeAll(async () => {
  sb = await startTestSandbox();
  merchant = await sb.world.merchant();
  await sb.world.wallet(merchant.id);
});
afterEach(() => sb.admin('DELETE', '/faults'));
afterAll(() => sb.close());

describe('admin API', () => {
  it('requires the admin token, and never serves it under /external', async () => {
    const none = await sb.call('POST', '/sandbox/v1/merchants', { body: { name: 'x' } });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ code: 'unauthorized', message: 'Unauthorized.', data: null });
    const merchantKey = await sb.call('GET', '/sandbox/v1/merchants', { key: merchant.key });
    expect(merchantKey.status).toBe(401);
    const adminAsMerchant = await sb.call('GET', '/external/v1/wallets', { key: 'test-admin-token' });
    expect(adminAsMerchant.status).toBe(401);
  });

  it('validates admin bodies with data_invalid', async () => {
    const { status, body } = await sb.call('POST', '/sandbox/v1/merchants', {
      key: 'test-admin-token',
      body: { name: 'x', withdrawalConfig: { fee: '-1', dailyLimit: '1', monthlyLimit: '1' } },
    });
    expect(status).toBe(400);
    expect(body).toEqual({
      code: 'data_invalid',
      message: 'withdrawalConfig.fee must be a non-negative decimal string',
      data: null,
    });
    const deposit = await sb.call(
      'POST',
      `/sandbox/v1/wallets/00000000-0000-4000-8000-000000000000/deposits`,
      {
        key: 'test-admin-token',
        body: { amount: '1' },
      },
    );
    expect(deposit.status).toBe(404);
  });

  it('shows a key once and stores only its hash', async () => {
    const key = await sb.admin('POST', `/merchants/${merchant.id}/api-keys`, {
      name: 'ci',
      access: 'read_write',
    });
    expect(key.key).toMatch(/^mw_sandbox_/);
    const everything = JSON.stringify([...sb.store.merchants.values()]) + JSON.stringify(sb.store);
    expect(everything).not.toContain(key.key);
    const works = await sb.call('GET', '/external/v1/wallets', { key: key.key });
    expect(works.status).toBe(200);
  });

  it('creates a wallet as the public API shows it', async () => {
    const wallet = await sb.world.wallet(merchant.id, { USDT: '12.5', TRX: '3' });
    const fetched = await sb.call('GET', `/external/v1/wallets/${wallet.id}`, { key: merchant.key });
    expect(fetched.body.data).toEqual(wallet);
  });
});

describe('fault injection', () => {
  it('answers with an injected status and body, then stops after `times`', async () => {
    await sb.admin('POST', '/faults', {
      method: 'GET',
      path: '/external/v1/wallets',
      status: 503,
      body: 'upstream down',
      headers: { 'retry-after': '2' },
      times: 2,
    });
    for (let i = 0; i < 2; i++) {
      const faulted = await sb.call('GET', '/external/v1/wallets', { key: merchant.key });
      expect(faulted.status).toBe(503);
      expect(faulted.text).toBe('upstream down');
      expect(faulted.headers.get('retry-after')).toBe('2');
    }
    const healed = await sb.call('GET', '/external/v1/wallets', { key: merchant.key });
    expect(healed.status).toBe(200);
    expect(await sb.admin('GET', '/faults')).toEqual([]);
  });

  it('matches by method and path prefix only', async () => {
    await sb.admin('POST', '/faults', {
      method: 'POST',
      path: '/external/v1/withdrawal-intents',
      status: 500,
    });
    expect((await sb.call('GET', '/external/v1/withdrawal-intents', { key: merchant.key })).status).toBe(200);
    expect((await sb.call('GET', '/external/v1/deposits', { key: merchant.key })).status).toBe(200);
    const post = await sb.call('POST', '/external/v1/withdrawal-intents', { key: merchant.key, body: {} });
    expect(post.status).toBe(500);
    expect(post.body).toEqual({ code: 'fault_injected', message: 'Injected fault.', data: null });
  });

  it('resets the connection', async () => {
    await sb.admin('POST', '/faults', { path: '/external/v1/deposits', reset: true, times: 1 });
    await expect(sb.call('GET', '/external/v1/deposits', { key: merchant.key })).rejects.toThrow();
    expect((await sb.call('GET', '/external/v1/deposits', { key: merchant.key })).status).toBe(200);
  });

  it('delays by latencyMs before answering normally', async () => {
    await sb.admin('POST', '/faults', { path: '/external/v1/wallets', latencyMs: 150, times: 1 });
    const started = performance.now();
    const { status } = await sb.call('GET', '/external/v1/wallets', { key: merchant.key });
    expect(status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('hangs without answering when asked', async () => {
    await sb.admin('POST', '/faults', { path: '/external/v1/wallets', hang: true, times: 1 });
    const { port } = new URL(sb.url);
    const answered = await new Promise<boolean>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `GET /external/v1/wallets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${merchant.key}\r\n\r\n`,
        );
        // The sandbox logs the request before it hangs; once logged, nothing may come back.
        const poll = setInterval(() => {
          if (sb.sandbox.requests.at(-1)?.status === -1) {
            clearInterval(poll);
            setImmediate(() => {
              socket.destroy();
              resolve(false);
            });
          }
        }, 5);
        socket.once('data', () => {
          clearInterval(poll);
          socket.destroy();
          resolve(true);
        });
      });
    });
    expect(answered).toBe(false);
  });

  it('logs every /external request with its merchant, request id and trace context, for call counting', async () => {
    await sb.admin('DELETE', '/requests');
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await sb.call('GET', '/external/v1/wallets?size=5', {
      key: merchant.key,
      headers: { 'x-request-id': 'req-1', traceparent },
    });
    await sb.call('GET', '/external/v1/deposits', { key: 'nope' });
    const logged = await sb.admin('GET', '/requests');
    expect(logged).toEqual([
      {
        method: 'GET',
        path: '/external/v1/wallets?size=5',
        merchantId: merchant.id,
        status: 200,
        requestId: 'req-1',
        traceparent,
      },
      {
        method: 'GET',
        path: '/external/v1/deposits',
        merchantId: null,
        status: 401,
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        traceparent: null,
      },
    ]);
  });
});

describe('seeded world', () => {
  it('is deterministic, covers every status and honours the demo keys', async () => {
    const a = seedWorld();
    const b = seedWorld();
    expect([...a.store.deposits.keys()]).toEqual([...b.store.deposits.keys()]);
    expect([...a.store.wallets.values()].map((w) => w.address)).toEqual(
      [...b.store.wallets.values()].map((w) => w.address),
    );
    expect(new Set([...a.store.deposits.values()].map((d) => d.status))).toEqual(
      new Set(['pending', 'processing', 'completed', 'failed']),
    );
    expect(new Set([...a.store.withdrawals.values()].map((w) => w.status))).toEqual(
      new Set(['preparing', 'reviewing', 'pending', 'completed', 'failed', 'cancelled']),
    );
    expect(a.merchants.initech.withdrawalConfig).toBeNull();
    expect(a.store.authenticate(DEMO_KEYS.acmeReadWrite)?.access).toBe('read_write');
    expect(a.store.authenticate(DEMO_KEYS.acmeReadOnly)?.access).toBe('read_only');
    expect(a.store.authenticate(DEMO_KEYS.acmeRevoked)).toBeNull();
    for (const wallet of a.store.wallets.values()) {
      for (const asset of wallet.assets.values()) {
        expect(asset.available.isNegative()).toBe(false);
        expect(asset.locked.isNegative()).toBe(false);
      }
    }
  });

  it('grows to a benchmark-sized world', () => {
    const { store, merchants } = seedWorld({ wallets: 20, deposits: 20_000, withdrawals: 2_000 });
    expect(store.listDeposits(merchants.acme.id, 1, 1).totalCount).toBe(20_000);
    expect(store.listWithdrawals(merchants.acme.id, 1, 1).totalCount).toBe(2_000);
    expect(store.listWallets(merchants.acme.id, 1, 1).totalCount).toBe(20);
  });
});
