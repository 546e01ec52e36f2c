import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SandboxStore } from '../../../src/sandbox/store/store.ts';
import type { RunningServer } from '../../../src/server.ts';
import { CallerScopes } from '../../../src/upstream/caller-scope.ts';
import { MemoryIdempotencyStore } from '../../../src/withdrawals/memory-idempotency-store.ts';
import { CreateWithdrawalDocument, type CreateWithdrawalMutationVariables } from '../../generated/graphql.ts';
import { DEFAULTS, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { closeWithoutLeaks } from '../../support/leaks.ts';
import { withdrawalInput as sandboxInput } from '../../support/sandbox.ts';
import { recordSuiteKey } from '../../support/suite-logs.ts';

/**
 * Admission by evidence, as an outsider with made-up keys meets it: a well-formed key proves
 * nothing, so what a key may cost the REST API, which WebSocket slots it may take, and what is
 * replayed to it, follow what the REST API said of it lately (upstream/key-evidence.ts).
 */

let gw: TestGateway;
closeWithoutLeaks(() => gw);
beforeAll(async () => {
  gw = await startTestGateway();
});
beforeEach(() => gw.resetCalls());

/** A well-formed key the REST API never issued (the sandbox's format, 32 base64url characters). */
const madeUpKey = () => `mw_sandbox_${randomBytes(24).toString('base64url')}`;

/** 20 aliased lists, each a different page size, so no two share an upstream call by coalescing. */
const TWENTY_LISTS = `{ ${Array.from({ length: 20 }, (_, i) => `l${i}: wallets(first: ${i + 1}) { totalCount }`).join(' ')} }`;

/** createWithdrawalIntent's input: 1 USDT from `walletId` to an external address. */
const withdrawalInput = (walletId: string, overrides: Record<string, unknown> = {}) =>
  sandboxInput(walletId, overrides) as CreateWithdrawalMutationVariables['input'];

const REFUSED = {
  data: null,
  errors: [
    {
      message: 'The API key was not accepted.',
      extensions: { code: 'UNAUTHENTICATED', upstream: { status: 401, code: 'unauthorized' } },
    },
  ],
};

describe('a key the REST API refused', () => {
  it('costs one REST call for a request of 20 lists, and none for the next request within the TTL', async () => {
    const key = madeUpKey();
    const first = await gw.request(TWENTY_LISTS, {}, { key });
    expect(first.status).toBe(401);
    expect(first.body).toEqual(REFUSED);
    expect(gw.upstreamCalls()).toHaveLength(1);

    gw.resetCalls();
    const again = await gw.request(TWENTY_LISTS, {}, { key });
    expect(again.status).toBe(401);
    expect(again.body).toEqual(REFUSED);
    expect(gw.upstreamCalls()).toEqual([]);
  });

  it('refuses its withdrawal unsent, in the same shape, without a REST call', async () => {
    const key = madeUpKey();
    await gw.request('{ wallets(first: 1) { totalCount } }', {}, { key });
    gw.resetCalls();
    const withdrawal = await gw.run(
      CreateWithdrawalDocument,
      { input: withdrawalInput('00000000-0000-4000-8000-000000000000', { idempotencyKey: 'made-up-1' }) },
      key,
    );
    expect(withdrawal.status).toBe(401);
    expect(withdrawal.body).toEqual(REFUSED);
    expect(gw.upstreamCalls()).toEqual([]);
  });

  it('a real key not seen lately makes its first call alone, then the rest of its request at once', async () => {
    const merchant = await gw.sandbox.world.merchant();
    recordSuiteKey(merchant.key);
    await gw.sandbox.world.wallet(merchant.id);
    // The first list to arrive is held 50 ms, so that any other sent meanwhile arrives before its answer.
    await gw.sandbox.admin('POST', '/faults', {
      method: 'GET',
      path: '/external/v1/wallets?',
      latencyMs: 50,
      times: 1,
    });
    const log = gw.sandbox.sandbox.requests;
    /** For each request that reached the REST API after the first: whether the first was answered by then. */
    const firstAnswered: boolean[] = [];
    const push = log.push.bind(log);
    log.push = (...entries) => {
      if (log.length > 0) firstAnswered.push(log[0]?.status !== 0);
      return push(...entries);
    };
    try {
      const lists = await gw.request(TWENTY_LISTS, {}, { key: merchant.key });
      expect(lists.body.errors).toBeUndefined();
      expect(Object.values(lists.body.data ?? {})).toEqual(Array(20).fill({ totalCount: 1 }));
    } finally {
      log.push = push;
    }
    expect(gw.upstreamCalls()).toHaveLength(20);
    expect(firstAnswered).toEqual(Array(19).fill(true));
  });

  it('a 403 (a real key without the permission) is not a refusal: the key reads on', async () => {
    const merchant = await gw.sandbox.world.merchant();
    recordSuiteKey(merchant.readOnlyKey);
    await gw.sandbox.world.wallet(merchant.id);
    const forbidden = await gw.run(
      CreateWithdrawalDocument,
      { input: withdrawalInput('00000000-0000-4000-8000-000000000000') },
      merchant.readOnlyKey,
    );
    expect(forbidden.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    gw.resetCalls();
    const reads = await gw.request('{ wallets(first: 1) { totalCount } }', {}, { key: merchant.readOnlyKey });
    expect(reads.body).toEqual({ data: { wallets: { totalCount: 1 } } });
    expect(gw.upstreamCalls()).toHaveLength(1);
  });
});

describe('a revoked key retrying a withdrawal', () => {
  const sandboxStore = new SandboxStore();
  const idempotencyStore = new MemoryIdempotencyStore({
    maxKeys: DEFAULTS.idempotencyMaxKeys,
    maxKeysPerCaller: DEFAULTS.idempotencyMaxKeysPerCaller,
  });
  const scopes = new CallerScopes(randomBytes(32));
  /** Two processes of one fleet: the same REST API, idempotency records and caller scopes. */
  let first: TestGateway;
  let second: TestGateway;
  beforeAll(async () => {
    const options = {
      store: sandboxStore,
      infrastructure: { idempotencyStore, scopes },
    };
    first = await startTestGateway(options);
    second = await startTestGateway(options);
  });
  afterAll(async () => {
    await first.close();
    await second.close();
  });

  /** A withdrawal made on the first process with a key of its own (`keyId`, to revoke it). */
  async function withdrawOnFirst() {
    const merchant = await first.sandbox.world.merchant();
    const { id: keyId, key } = await first.sandbox.admin('POST', `/merchants/${merchant.id}/api-keys`, {
      name: 'to revoke',
      access: 'read_write',
    });
    recordSuiteKey(key);
    const wallet = await first.sandbox.world.wallet(merchant.id);
    const input = withdrawalInput(wallet.id, { idempotencyKey: `k-${randomBytes(4).toString('hex')}` });
    const created = await first.run(CreateWithdrawalDocument, { input }, key);
    expect(created.body.data?.createWithdrawalIntent.__typename).toBe('CreateWithdrawalIntentSuccess');
    return { key: key as string, keyId: keyId as string, input, created };
  }

  it('is answered UNAUTHENTICATED, not its earlier withdrawal, after asking the REST API once', async () => {
    const { key, keyId, input } = await withdrawOnFirst();
    await first.sandbox.admin('POST', `/api-keys/${keyId}/revoke`);
    second.resetCalls();
    const retried = await second.run(CreateWithdrawalDocument, { input }, key);
    expect(retried.status).toBe(401);
    expect(retried.body).toEqual(REFUSED);
    expect(second.upstreamCalls()).toEqual(['GET /external/v1/wallets?page=1&size=1']);
  });

  it('is answered UNAUTHENTICATED on the process that accepted it a moment ago, after asking once', async () => {
    const { key, keyId, input } = await withdrawOnFirst();
    await first.sandbox.admin('POST', `/api-keys/${keyId}/revoke`);
    first.resetCalls();
    const retried = await first.run(CreateWithdrawalDocument, { input }, key);
    expect(retried.status).toBe(401);
    expect(retried.body).toEqual(REFUSED);
    expect(first.upstreamCalls()).toEqual(['GET /external/v1/wallets?page=1&size=1']);
    // Refused within the TTL: the next retry is answered without asking again.
    first.resetCalls();
    expect((await first.run(CreateWithdrawalDocument, { input }, key)).body).toEqual(REFUSED);
    expect(first.upstreamCalls()).toEqual([]);
  });

  it('replays of one key at once share its proofs: every one replayed, 1 or 2 GETs, no POST', async () => {
    const { key, input, created } = await withdrawOnFirst();
    first.resetCalls();
    const replays = await Promise.all(
      Array.from({ length: 10 }, () => first.run(CreateWithdrawalDocument, { input }, key)),
    );
    for (const replayed of replays) expect(replayed.body).toEqual(created.body);
    // The first GET, and the one shared by those that came while it was under way.
    const calls = first.upstreamCalls();
    expect(calls.length).toBeGreaterThanOrEqual(1);
    expect(calls.length).toBeLessThanOrEqual(2);
    expect(new Set(calls)).toEqual(new Set(['GET /external/v1/wallets?page=1&size=1']));
  });

  it('a key still accepted gets its withdrawal replayed, each replay asking the REST API once', async () => {
    const { key, input, created } = await withdrawOnFirst();
    second.resetCalls();
    const replayed = await second.run(CreateWithdrawalDocument, { input }, key);
    expect(replayed.body).toEqual(created.body);
    expect(second.upstreamCalls()).toEqual(['GET /external/v1/wallets?page=1&size=1']);
    // Accepted a moment ago: still asked, since it may have been revoked since.
    second.resetCalls();
    expect((await second.run(CreateWithdrawalDocument, { input }, key)).body).toEqual(created.body);
    expect(second.upstreamCalls()).toEqual(['GET /external/v1/wallets?page=1&size=1']);
  });
});

describe('WebSockets of made-up keys', () => {
  /** 40 WebSockets per process: the allowance of keys not accepted lately is 5 % of it, 2. */
  let ws: TestGateway;
  let server: RunningServer;
  let sockets: WebSocket[] = [];
  beforeEach(async () => {
    ws = await startTestGateway({ config: { edge: { maxWebSockets: 40, webSocketsPerKey: 20 } } });
    server = await ws.runtime.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(async () => {
    for (const socket of sockets) socket.close();
    sockets = [];
    await ws.close();
  });

  /** A graphql-ws socket's connection_init with `key`: acknowledged, or closed with a code. */
  async function connect(key: string): Promise<{ acknowledged: boolean; closeCode: number | null }> {
    const socket = new WebSocket(`${server.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
    sockets.push(socket);
    socket.addEventListener('open', () =>
      socket.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${key}` } })),
    );
    return new Promise((resolve) => {
      socket.addEventListener('message', (event) => {
        if (JSON.parse(String(event.data)).type === 'connection_ack') {
          resolve({ acknowledged: true, closeCode: null });
        }
      });
      socket.addEventListener('close', (event) => resolve({ acknowledged: false, closeCode: event.code }));
    });
  }

  it('cannot fill the process cap: a real merchant, new or known, is acknowledged past them', async () => {
    // Two made-up keys, each up to its cap of 20: as many as the process cap of 40.
    const outsiders = [madeUpKey(), madeUpKey()];
    const attempts = await Promise.all(
      outsiders.flatMap((key) => Array.from({ length: 20 }, () => connect(key))),
    );
    expect(attempts.filter((a) => a.acknowledged)).toHaveLength(2);
    // Past the allowance each made-up key was asked about once, and refused.
    expect(new Set(attempts.map((a) => a.closeCode))).toEqual(new Set([null, 4401]));
    expect(ws.upstreamCalls().length).toBeLessThanOrEqual(2);

    const known = await ws.sandbox.world.merchant();
    recordSuiteKey(known.key);
    await ws.request('{ wallets(first: 1) { totalCount } }', {}, { key: known.key });
    ws.resetCalls();
    expect(await connect(known.key)).toEqual({ acknowledged: true, closeCode: null });
    expect(ws.upstreamCalls()).toEqual([]);

    const fresh = await ws.sandbox.world.merchant();
    recordSuiteKey(fresh.key);
    // Its first sockets, five at once, waited for one call that proved the key.
    expect(await Promise.all(Array.from({ length: 5 }, () => connect(fresh.key)))).toEqual(
      Array(5).fill({ acknowledged: true, closeCode: null }),
    );
    expect(ws.upstreamCalls()).toEqual(['GET /external/v1/wallets?page=1&size=1']);
  });

  it('a socket in the allowance leaves it once its key is accepted, making room for others', async () => {
    const merchant = await ws.sandbox.world.merchant();
    recordSuiteKey(merchant.key);
    // A new key's two sockets fill the allowance of 2, with no REST call.
    expect([await connect(merchant.key), await connect(merchant.key)]).toEqual([
      { acknowledged: true, closeCode: null },
      { acknowledged: true, closeCode: null },
    ]);
    expect(ws.upstreamCalls()).toEqual([]);
    // Its first operation's REST call (here over HTTP) answers 2xx: the key is accepted.
    await ws.request('{ wallets(first: 1) { totalCount } }', {}, { key: merchant.key });
    ws.resetCalls();
    // The allowance is empty again: two made-up keys' sockets take it, a third is asked about.
    expect(await connect(madeUpKey())).toEqual({ acknowledged: true, closeCode: null });
    expect(await connect(madeUpKey())).toEqual({ acknowledged: true, closeCode: null });
    expect(ws.upstreamCalls()).toEqual([]);
    expect(await connect(madeUpKey())).toEqual({ acknowledged: false, closeCode: 4401 });
    expect(ws.upstreamCalls()).toEqual(['GET /external/v1/wallets?page=1&size=1']);
  });
});
