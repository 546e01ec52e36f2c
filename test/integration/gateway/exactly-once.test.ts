import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { globalIdOf } from '../../../src/schema/global-ids.ts';
import { MemoryIdempotencyStore } from '../../../src/withdrawals/memory-idempotency-store.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { withdrawalBody, withdrawalInput } from '../../support/sandbox.ts';
import { recordSuiteKey } from '../../support/suite-logs.ts';

/**
 * Exactly once against a REST API that does not deduplicate (the sandbox's Idempotency-Key
 * extension off, as the spec promises nothing), with other keys of the same merchant acting in
 * between. Each test is one history an attacker or an unlucky client found; every one of them
 * failed before the gateway registered submissions and claimed intents.
 */

const LATE_COMMIT_MS = 300;
let gw: TestGateway;
let store: MemoryIdempotencyStore;

/**
 * A gateway that stops waiting for a POST after 1 s (a slower answer is an unknown outcome), with
 * these allowances, in front of a sandbox that does not deduplicate. The second is far above any
 * answer of a busy machine; the late answers here come after 3 s.
 */
async function gatewayWithAllowances(
  allowances: { clockAllowanceMs: number; lateCommitMs: number },
  idempotencyStore?: MemoryIdempotencyStore,
): Promise<TestGateway> {
  const started = await startTestGateway({
    upstream: { headersTimeoutMs: 1_000 },
    config: { reconcile: allowances },
    ...(idempotencyStore && { infrastructure: { idempotencyStore } }),
  });
  started.sandbox.sandbox.idempotencyExtension = false;
  return started;
}

beforeAll(async () => {
  store = new MemoryIdempotencyStore({ maxKeys: 40, maxKeysPerCaller: 10 });
  gw = await gatewayWithAllowances({ clockAllowanceMs: 30_000, lateCommitMs: LATE_COMMIT_MS }, store);
});
afterAll(() => gw.close());
beforeEach(async () => {
  gw.resetCalls();
  await gw.sandbox.admin('DELETE', '/faults');
});

const MUTATION = `mutation Withdraw($input: CreateWithdrawalIntentInput!) {
  createWithdrawalIntent(input: $input) {
    __typename
    ... on CreateWithdrawalIntentSuccess { withdrawalIntent { id restId } }
    ... on UserError { code }
  }
}`;

/** A merchant with two read-write keys and a read-only one, and a wallet with plenty of USDT. */
async function merchant() {
  const m = await gw.sandbox.world.merchant();
  const second = await gw.sandbox.admin('POST', `/merchants/${m.id}/api-keys`, {
    name: 'second integration',
    access: 'read_write',
  });
  recordSuiteKey(second.key);
  const wallet = await gw.sandbox.world.wallet(m.id, { USDT: '100000', TRX: '10' });
  const withdraw = async (as: string, overrides: Record<string, unknown> = {}) => {
    const response = await gw.request(
      MUTATION,
      { input: withdrawalInput(wallet.id, { amount: '7.77', ...overrides }) },
      { key: as },
    );
    const result = response.body.data?.createWithdrawalIntent as
      | { __typename: string; withdrawalIntent?: { id: string; restId: string }; code?: string }
      | null
      | undefined;
    return {
      typename: result?.__typename ?? null,
      restId: result?.withdrawalIntent?.restId ?? null,
      error: response.body.errors?.[0]?.extensions as Record<string, unknown> | undefined,
    };
  };
  /** Every intent of the merchant at the REST API, newest first. */
  const intents = async () =>
    (await gw.sandbox.call('GET', '/external/v1/withdrawal-intents?size=1000', { key: m.key })).body.data as {
      id: string;
      amount: string;
    }[];
  return { k1: m.key, k2: second.key as string, readOnly: m.readOnlyKey, wallet, withdraw, intents };
}

const posts = () => gw.upstreamCalls().filter((call) => call.startsWith('POST'));

/** The next POST to /withdrawal-intents meets `fault` (once). */
const nextPost = (fault: Record<string, unknown>) =>
  gw.sandbox.admin('POST', '/faults', {
    method: 'POST',
    path: '/external/v1/withdrawal-intents',
    times: 1,
    ...fault,
  });

describe("a retry after OUTCOME_UNKNOWN never takes another payout's intent", () => {
  it('503 before commit, then another key makes the same payout: the retry sends its own', async () => {
    const { k1, k2, withdraw, intents } = await merchant();
    await nextPost({ status: 503 });
    const lost = await withdraw(k1, { idempotencyKey: 'pay-42' });
    expect(lost.error).toMatchObject({ code: 'OUTCOME_UNKNOWN', idempotencyKey: 'pay-42' });
    expect(await intents()).toHaveLength(0);

    const other = await withdraw(k2, { idempotencyKey: 'k2-payout' });
    expect(other.typename).toBe('CreateWithdrawalIntentSuccess');

    const retry = await withdraw(k1, { idempotencyKey: 'pay-42' });
    expect(retry.typename).toBe('CreateWithdrawalIntentSuccess');
    expect(retry.restId).not.toBe(other.restId);
    // Two payouts asked for, two made: the first POST created nothing, so the retry sent again.
    expect((await intents()).map((i) => i.id).sort()).toEqual([other.restId, retry.restId].sort());
    expect(posts()).toHaveLength(3);
    // And the key now replays its own intent.
    expect((await withdraw(k1, { idempotencyKey: 'pay-42' })).restId).toBe(retry.restId);
  });

  it('503 before commit, then the same key makes the same payout without an idempotency key: the retry sends its own', async () => {
    const { k1, withdraw, intents } = await merchant();
    await nextPost({ status: 503 });
    expect((await withdraw(k1, { idempotencyKey: 'pay-43' })).error?.code).toBe('OUTCOME_UNKNOWN');
    const unkeyed = await withdraw(k1);
    expect(unkeyed.typename).toBe('CreateWithdrawalIntentSuccess');

    const retry = await withdraw(k1, { idempotencyKey: 'pay-43' });
    expect(retry.typename).toBe('CreateWithdrawalIntentSuccess');
    expect(retry.restId).not.toBe(unkeyed.restId);
    expect(await intents()).toHaveLength(2);
  });
});

describe('a definite refusal stays a refusal', () => {
  it('a read-only key refused with FORBIDDEN is refused again after a read-write key made the same payout', async () => {
    const { k1, readOnly, withdraw, intents } = await merchant();
    const refused = await withdraw(readOnly, { idempotencyKey: 'ro-1' });
    expect(refused.error).toMatchObject({ code: 'FORBIDDEN' });
    const made = await withdraw(k1, { idempotencyKey: 'rw-1' });
    expect(made.typename).toBe('CreateWithdrawalIntentSuccess');

    gw.resetCalls();
    const again = await withdraw(readOnly, { idempotencyKey: 'ro-1' });
    expect(again.typename).toBeNull();
    expect(again.error).toMatchObject({ code: 'FORBIDDEN' });
    // Nothing was kept for the refused key: the REST API was asked again, and refused again.
    expect(posts()).toHaveLength(1);
    expect(await intents()).toHaveLength(1);
  });

  it('a 401 leaves no record: the key is free for the same request once the key is valid', async () => {
    const { withdraw } = await merchant();
    const before = store.size;
    const refused = await withdraw('mw_test_made-up-key-0000000000000000', { idempotencyKey: 'any-1' });
    expect(refused.error).toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(store.size).toBe(before);
  });
});

describe('a late commit is found, however many intents came after it', () => {
  it('the REST API commits, answers after the deadline, 120 intents follow: the retry returns the first and sends nothing', async () => {
    const { k1, wallet, withdraw, intents } = await merchant();
    await nextPost({ respondAfterMs: 3_000 });
    const late = await withdraw(k1, { idempotencyKey: 'late-1', amount: '12.34' });
    expect(late.error).toMatchObject({ code: 'OUTCOME_UNKNOWN' });
    const [committed] = await intents();
    for (let i = 0; i < 120; i++) {
      const made = await gw.sandbox.call('POST', '/external/v1/withdrawal-intents', {
        key: k1,
        body: withdrawalBody(wallet.id, { amount: `${1 + (i % 50)}.00` }),
      });
      expect(made.status).toBe(201);
    }
    gw.resetCalls();
    const retry = await withdraw(k1, { idempotencyKey: 'late-1', amount: '12.34' });
    expect(retry.restId).toBe(committed?.id);
    expect(posts()).toEqual([]);
    // The list was read page by page, back to the attempt's window: more than one page.
    expect(
      gw.upstreamCalls().filter((call) => call.startsWith('GET /external/v1/withdrawal-intents?')),
    ).toEqual([
      'GET /external/v1/withdrawal-intents?page=1&size=100',
      'GET /external/v1/withdrawal-intents?page=2&size=100',
    ]);
    expect((await intents()).filter((i) => i.amount.startsWith('12.34'))).toHaveLength(1);
  });
});

describe('intents made after the window cost a binary search, not a read of each page', () => {
  it('a late commit behind 1,200 newer intents is found with a handful of reads', async () => {
    // Tight allowances, so the 1,200 intents made afterwards all fall after the attempt's window.
    const tight = await gatewayWithAllowances({ clockAllowanceMs: 100, lateCommitMs: 100 });
    try {
      const m = await tight.sandbox.world.merchant();
      const wallet = await tight.sandbox.world.wallet(m.id, { USDT: '100000', TRX: '0' });
      const input = withdrawalInput(wallet.id, { idempotencyKey: 'far-1', amount: '9.87' });
      await tight.sandbox.admin('POST', '/faults', {
        method: 'POST',
        path: '/external/v1/withdrawal-intents',
        respondAfterMs: 3_000,
        times: 1,
      });
      expect(
        (await tight.request(MUTATION, { input }, { key: m.key })).body.errors?.[0]?.extensions?.code,
      ).toBe('OUTCOME_UNKNOWN');
      const committed = (
        await tight.sandbox.call('GET', '/external/v1/withdrawal-intents?size=1', { key: m.key })
      ).body.data[0].id as string;
      // 1,200 other intents, 8 at a time: the newest 100 are all far past the attempt's window.
      for (let batch = 0; batch < 150; batch++) {
        await Promise.all(
          Array.from({ length: 8 }, () =>
            tight.sandbox.call('POST', '/external/v1/withdrawal-intents', {
              key: m.key,
              body: withdrawalBody(wallet.id, { amount: '1.00' }),
            }),
          ),
        );
      }
      tight.resetCalls();
      const retry = await tight.request(MUTATION, { input }, { key: m.key });
      const result = retry.body.data?.createWithdrawalIntent as { withdrawalIntent?: { restId: string } };
      expect(result.withdrawalIntent?.restId).toBe(committed);
      const reads = tight
        .upstreamCalls()
        .filter((call) => call.startsWith('GET /external/v1/withdrawal-intents?'));
      // 13 pages in all: page 1, a few probes, then the pages that hold the window; page 2 is skipped.
      expect(reads.length).toBeLessThan(9);
      expect(reads).not.toContain('GET /external/v1/withdrawal-intents?page=2&size=100');
      expect(tight.upstreamCalls().filter((call) => call.startsWith('POST'))).toEqual([]);
    } finally {
      await tight.close();
    }
  });
});

describe('ambiguous evidence: nothing sent, the key stays blocked, the client is told why', () => {
  it('two unclaimed candidates (another writer made the same payout straight on the REST API)', async () => {
    const { k1, wallet, withdraw, intents } = await merchant();
    await nextPost({ respondAfterMs: 3_000 });
    expect((await withdraw(k1, { idempotencyKey: 'twin-1', amount: '5.55' })).error?.code).toBe(
      'OUTCOME_UNKNOWN',
    );
    await gw.sandbox.call('POST', '/external/v1/withdrawal-intents', {
      key: k1,
      body: withdrawalBody(wallet.id, { amount: '5.55' }),
    });
    const both = (await intents()).map((intent) => intent.id);
    gw.resetCalls();
    for (let i = 0; i < 2; i++) {
      const retry = await withdraw(k1, { idempotencyKey: 'twin-1', amount: '5.55' });
      expect(retry.typename).toBeNull();
      expect(retry.error).toMatchObject({ code: 'OUTCOME_UNKNOWN', reason: 'SEVERAL_CANDIDATES' });
      expect([...((retry.error?.candidates ?? []) as string[])].sort()).toEqual(
        both.map((id) => globalIdOf('WithdrawalIntent', id)).sort(),
      );
      expect(retry.error?.retryAfterSeconds).toBeUndefined();
    }
    expect(posts()).toEqual([]);
  });

  it('one candidate that an unkeyed request with no answer may also have made', async () => {
    const { k1, withdraw, intents } = await merchant();
    // The unkeyed request commits and its answer is lost; then the keyed one is refused by a 503.
    await nextPost({ respondAfterMs: 3_000 });
    expect((await withdraw(k1, { amount: '6.66' })).error?.code).toBe('OUTCOME_UNKNOWN');
    await nextPost({ status: 503 });
    expect((await withdraw(k1, { idempotencyKey: 'rival-1', amount: '6.66' })).error?.code).toBe(
      'OUTCOME_UNKNOWN',
    );
    const [only] = await intents();
    gw.resetCalls();
    const retry = await withdraw(k1, { idempotencyKey: 'rival-1', amount: '6.66' });
    expect(retry.error).toMatchObject({
      code: 'OUTCOME_UNKNOWN',
      reason: 'COMPETING_ATTEMPT',
      candidates: [globalIdOf('WithdrawalIntent', only?.id ?? '')],
    });
    expect(posts()).toEqual([]);
  });

  it('the list cannot be read to the window: WINDOW_UNREAD, then decided once it can', async () => {
    const { k1, withdraw, intents } = await merchant();
    await nextPost({ respondAfterMs: 3_000 });
    expect((await withdraw(k1, { idempotencyKey: 'unread-1', amount: '4.44' })).error?.code).toBe(
      'OUTCOME_UNKNOWN',
    );
    await gw.sandbox.admin('POST', '/faults', {
      method: 'GET',
      path: '/external/v1/withdrawal-intents',
      status: 503,
      times: 20,
    });
    gw.resetCalls();
    const blind = await withdraw(k1, { idempotencyKey: 'unread-1', amount: '4.44' });
    expect(blind.error).toMatchObject({ code: 'OUTCOME_UNKNOWN', reason: 'WINDOW_UNREAD', candidates: [] });
    expect(posts()).toEqual([]);

    await gw.sandbox.admin('DELETE', '/faults');
    const [committed] = await intents();
    const decided = await withdraw(k1, { idempotencyKey: 'unread-1', amount: '4.44' });
    expect(decided.restId).toBe(committed?.id);
    expect(posts()).toEqual([]);
  });
});

describe('storage no caller can abuse', () => {
  it('an unauthenticated flood leaves nothing; a caller at its bound forgets only its own refusals, and is refused unsent once successes fill it', async () => {
    const victim = await merchant();
    const kept = await victim.withdraw(victim.k1, { idempotencyKey: 'victim-1', amount: '3.21' });
    expect(kept.typename).toBe('CreateWithdrawalIntentSuccess');

    // 200 keyed attempts with made-up keys, 20 at a time: each is refused by the REST API and
    // leaves nothing, although the store holds at most 40 keys. (Claims in flight do count: a flood
    // holding more requests open at once than the store's room is refused unsent meanwhile; the
    // connection cap bounds that.)
    const sizeBefore = store.size;
    const codes = new Set<unknown>();
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          victim.withdraw(`mw_test_attacker-${batch}-${i}-000000000000000`, {
            idempotencyKey: `flood-${batch}-${i}`,
          }),
        ),
      );
      for (const answer of answers) codes.add(answer.error?.code);
    }
    expect(codes).toEqual(new Set(['UNAUTHENTICATED']));
    expect(store.size).toBe(sizeBefore);

    // A valid key fills its own bound (10) with refusals. An 11th new key forgets the oldest of
    // them (a refusal holds no money) and is sent; no other caller's record went.
    const attacker = await merchant();
    for (let i = 0; i < 10; i++) {
      const refused = await attacker.withdraw(attacker.k1, {
        idempotencyKey: `fill-${i}`,
        amount: '999999.00',
      });
      expect(refused.typename).toBe('BalanceInsufficientError');
    }
    gw.resetCalls();
    const sent = await attacker.withdraw(attacker.k1, { idempotencyKey: 'fill-10' });
    expect(sent.typename).toBe('CreateWithdrawalIntentSuccess');
    expect(posts()).toHaveLength(1);
    // Its other refusals still replay; the victim's record is still there: a replay sends nothing.
    gw.resetCalls();
    expect(
      (await attacker.withdraw(attacker.k1, { idempotencyKey: 'fill-3', amount: '999999.00' })).typename,
    ).toBe('BalanceInsufficientError');
    const replay = await victim.withdraw(victim.k1, { idempotencyKey: 'victim-1', amount: '3.21' });
    expect(replay.restId).toBe(kept.restId);
    expect(posts()).toEqual([]);

    // Successes are never forgotten: once they fill the bound, a new key is refused unsent.
    for (let i = 11; i < 20; i++) {
      expect((await attacker.withdraw(attacker.k1, { idempotencyKey: `fill-${i}` })).typename).toBe(
        'CreateWithdrawalIntentSuccess',
      );
    }
    gw.resetCalls();
    const full = await attacker.withdraw(attacker.k1, { idempotencyKey: 'fill-20' });
    expect(full.error).toMatchObject({ code: 'IDEMPOTENCY_UNAVAILABLE', sent: false, reason: 'STORE_FULL' });
    expect(posts()).toEqual([]);
    expect((await attacker.withdraw(attacker.k1, { idempotencyKey: 'fill-10' })).restId).toBe(sent.restId);
    expect(posts()).toEqual([]);
  });
});

describe('the window is judged only once it has closed', () => {
  it('a retry that cannot wait for the late-commit allowance answers WINDOW_OPEN with retryAfterSeconds', async () => {
    const patient = await gatewayWithAllowances({ clockAllowanceMs: 30_000, lateCommitMs: 60_000 });
    try {
      const m = await patient.sandbox.world.merchant();
      const wallet = await patient.sandbox.world.wallet(m.id, { USDT: '100', TRX: '0' });
      const input = withdrawalInput(wallet.id, { idempotencyKey: 'open-1' });
      await patient.sandbox.admin('POST', '/faults', {
        method: 'POST',
        path: '/external/v1/withdrawal-intents',
        status: 503,
        times: 1,
      });
      expect(
        (await patient.request(MUTATION, { input }, { key: m.key })).body.errors?.[0]?.extensions?.code,
      ).toBe('OUTCOME_UNKNOWN');
      patient.resetCalls();
      const retry = await patient.request(MUTATION, { input }, { key: m.key });
      expect(retry.body.errors?.[0]?.extensions).toMatchObject({
        code: 'OUTCOME_UNKNOWN',
        reason: 'WINDOW_OPEN',
        retryAfterSeconds: expect.any(Number),
      });
      expect(retry.body.errors?.[0]?.extensions?.retryAfterSeconds).toBeGreaterThan(50);
      // Neither a read nor a POST: the window's end has not come.
      expect(patient.upstreamCalls()).toEqual([]);
    } finally {
      await patient.close();
    }
  });
});
