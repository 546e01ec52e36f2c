import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS, seedWorld } from '../../../src/sandbox/seed.ts';
import { startTestSandbox, type TestSandbox, withdrawalBody } from '../../support/sandbox.ts';

let sb: TestSandbox;
let merchant: { id: string; key: string };
let walletId: string;
beforeAll(async () => {
  sb = await startTestSandbox();
  merchant = await sb.world.merchant();
  walletId = (await sb.world.wallet(merchant.id)).id;
});

/** POST /external/v1/withdrawal-intents of 10 USDT from the test wallet, with an X-Request-Id. */
function withdraw(requestId: string, headers: Record<string, string> = {}) {
  return sb.call('POST', '/external/v1/withdrawal-intents', {
    key: merchant.key,
    body: withdrawalBody(walletId),
    headers: { 'x-request-id': requestId, ...headers },
  });
}

function logged(requestId: string) {
  return sb.sandbox.requests.filter((r) => r.requestId === requestId);
}
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

  it('targets one request by its X-Request-Id, and leaves the fault to that request', async () => {
    await sb.admin('POST', '/faults', {
      method: 'POST',
      path: '/external/v1/withdrawal-intents',
      requestId: 'target-2',
      status: 503,
      times: 1,
    });
    // Another request id, and a request without one, pass through and do not consume it.
    expect((await withdraw('bystander')).status).toBe(201);
    const anonymous = await sb.call('POST', '/external/v1/withdrawal-intents', {
      key: merchant.key,
      body: withdrawalBody(walletId),
    });
    expect(anonymous.status).toBe(201);
    expect(await sb.admin('GET', '/faults')).toEqual([
      expect.objectContaining({ requestId: 'target-2', times: 1 }),
    ]);

    const [first, second] = await Promise.all([withdraw('target-1'), withdraw('target-2')]);
    expect(first.status).toBe(201);
    expect(second.status).toBe(503);
    expect(second.body).toEqual({ code: 'fault_injected', message: 'Injected fault.', data: null });
    expect(logged('target-1')).toEqual([
      expect.objectContaining({ status: 201, createdId: first.body.data.id }),
    ]);
    expect(logged('target-2')).toEqual([expect.objectContaining({ status: 503, createdId: null })]);
    expect(await sb.admin('GET', '/faults')).toEqual([]);
  });

  it('resetAfterRoute: the intent is created, then the connection is cut without an answer', async () => {
    await sb.admin('POST', '/faults', {
      method: 'POST',
      path: '/external/v1/withdrawal-intents',
      resetAfterRoute: true,
      times: 1,
    });
    const before = await sb.call('GET', '/external/v1/withdrawal-intents?size=1000', { key: merchant.key });
    await expect(withdraw('committed-then-reset')).rejects.toThrow();

    const after = await sb.call('GET', '/external/v1/withdrawal-intents?size=1000', { key: merchant.key });
    const known = new Set(before.body.data.map((w: { id: string }) => w.id));
    const created = after.body.data.filter((w: { id: string }) => !known.has(w.id));
    expect(created).toHaveLength(1);
    expect(logged('committed-then-reset')).toEqual([
      expect.objectContaining({ method: 'POST', status: -1, createdId: created[0].id }),
    ]);
    expect(await sb.admin('GET', '/faults')).toEqual([]);
  });

  it('logs the id a successful POST created, and null for reads, refusals and replays', async () => {
    const created = await withdraw('creates', { 'idempotency-key': 'created-id-log' });
    expect(created.status).toBe(201);
    const replayed = await withdraw('replays', { 'idempotency-key': 'created-id-log' });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    await sb.call('GET', `/external/v1/withdrawal-intents/${created.body.data.id}`, {
      key: merchant.key,
      headers: { 'x-request-id': 'reads' },
    });
    const refused = await sb.call('POST', '/external/v1/withdrawal-intents', {
      key: merchant.key,
      body: withdrawalBody(walletId, { amount: '-1' }),
      headers: { 'x-request-id': 'refused' },
    });
    expect(refused.status).toBe(400);

    expect(logged('creates')).toEqual([
      expect.objectContaining({ status: 201, createdId: created.body.data.id }),
    ]);
    expect(logged('replays')).toEqual([expect.objectContaining({ status: 201, createdId: null })]);
    expect(logged('reads')).toEqual([expect.objectContaining({ status: 200, createdId: null })]);
    expect(logged('refused')).toEqual([expect.objectContaining({ status: 400, createdId: null })]);
    const viaAdmin = await sb.admin('GET', '/requests');
    expect(viaAdmin.find((r: { requestId: string }) => r.requestId === 'creates').createdId).toBe(
      created.body.data.id,
    );
  });

  it('refuses resetAfterRoute with a fault that answers before the route, and a malformed requestId', async () => {
    const combined = await sb.call('POST', '/sandbox/v1/faults', {
      key: 'test-admin-token',
      body: { path: '/external/v1/withdrawal-intents', resetAfterRoute: true, status: 503, hang: true },
    });
    expect(combined.status).toBe(400);
    expect(combined.body).toEqual({
      code: 'data_invalid',
      message: 'resetAfterRoute cannot be combined with hang, status (they answer before the route runs)',
      data: null,
    });
    const malformed = await sb.call('POST', '/sandbox/v1/faults', {
      key: 'test-admin-token',
      body: { path: '/external/v1/withdrawal-intents', requestId: 'has space' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('data_invalid');
    expect(malformed.body.message).toMatch(/^requestId must be 1-128 characters/);
    expect(await sb.admin('GET', '/faults')).toEqual([]);
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
        createdId: null,
        requestId: 'req-1',
        traceparent,
      },
      {
        method: 'GET',
        path: '/external/v1/deposits',
        merchantId: null,
        status: 401,
        createdId: null,
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
