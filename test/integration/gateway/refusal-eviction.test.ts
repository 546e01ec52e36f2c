import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connectRedis, type RedisClient } from '../../../src/redis/connection.ts';
import type { IdempotencyStore } from '../../../src/withdrawals/idempotency-store.ts';
import { MemoryIdempotencyStore } from '../../../src/withdrawals/memory-idempotency-store.ts';
import { RedisIdempotencyStore } from '../../../src/withdrawals/redis-idempotency-store.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { type RunningRedis, startRedis } from '../../support/redis.ts';
import { withdrawalInput } from '../../support/sandbox.ts';
import { recordSuiteKey } from '../../support/suite-logs.ts';

/**
 * One merchant's refusals cannot take the room another merchant's withdrawals need. The attack:
 * one merchant's API keys send withdrawals the REST API refuses (amounts over the balance, the
 * cheapest refusal) until the store's bounds are reached, scaled down (5 keys per API key, 20 in
 * the process). Refusals hold no money, so a new key forgets the oldest of them to make room;
 * pending and succeeded records are never forgotten, and when they alone fill a bound the new key
 * is refused unsent (STORE_FULL), as before. Run against both stores: the process's own, and Redis
 * (which has no store-wide bound but the per-caller one).
 */

const PER_CALLER = 5;
const STORE_KEYS = 20;

const MUTATION = `mutation Withdraw($input: CreateWithdrawalIntentInput!) {
  createWithdrawalIntent(input: $input) {
    __typename
    ... on CreateWithdrawalIntentSuccess { withdrawalIntent { id restId } }
    ... on UserError { code }
  }
}`;

let redis: RunningRedis;
let connection: RedisClient;
afterAll(async () => {
  connection?.disconnect();
  await redis?.close();
});

function suite(name: string, makeStore: (onEvicted: () => void) => Promise<IdempotencyStore>) {
  describe(name, () => {
    let gw: TestGateway;
    let evicted = 0;
    beforeAll(async () => {
      gw = await startTestGateway({
        infrastructure: { idempotencyStore: await makeStore(() => evicted++) },
      });
    });
    afterAll(() => gw?.close());
    beforeEach(() => {
      gw.resetCalls();
      evicted = 0;
    });

    const posts = () => gw.upstreamCalls().filter((call) => call.startsWith('POST'));

    /** A merchant with `keys` read-write API keys and a wallet holding `usdt`. */
    async function merchant(keys: number, usdt = '1000') {
      const m = await gw.sandbox.world.merchant();
      const all = [m.key];
      for (let i = 1; i < keys; i++) {
        const extra = await gw.sandbox.admin('POST', `/merchants/${m.id}/api-keys`, {
          name: `integration ${i}`,
          access: 'read_write',
        });
        recordSuiteKey(extra.key);
        all.push(extra.key as string);
      }
      const wallet = await gw.sandbox.world.wallet(m.id, { USDT: usdt, TRX: '10' });
      const withdraw = async (as: string, idempotencyKey: string, amount = '1.00') => {
        const response = await gw.request(
          MUTATION,
          { input: withdrawalInput(wallet.id, { amount, idempotencyKey }) },
          { key: as },
        );
        const result = response.body.data?.createWithdrawalIntent as
          | { __typename: string; withdrawalIntent?: { restId: string } }
          | null
          | undefined;
        return {
          typename: result?.__typename ?? null,
          restId: result?.withdrawalIntent?.restId ?? null,
          error: response.body.errors?.[0]?.extensions as Record<string, unknown> | undefined,
        };
      };
      const intents = async () =>
        (await gw.sandbox.call('GET', '/external/v1/withdrawal-intents?size=1000', { key: m.key })).body
          .data as { id: string }[];
      return { keys: all, withdraw, intents };
    }

    it("one merchant's refusals up to every bound: another merchant's keyed withdrawal still succeeds, and the flooding key can still withdraw", async () => {
      const attacker = await merchant(STORE_KEYS / PER_CALLER);
      // Each API key fills its own bound with refusals: together they fill the store's (in process).
      for (const key of attacker.keys) {
        for (let i = 0; i < PER_CALLER; i++) {
          const refused = await attacker.withdraw(key, `flood-${i}`, '999999.00');
          expect(refused.typename).toBe('BalanceInsufficientError');
        }
      }
      expect(evicted).toBe(0);

      // Another merchant's keyed withdrawal is sent and succeeds (it was STORE_FULL).
      const victim = await merchant(1);
      gw.resetCalls();
      const paid = await victim.withdraw(victim.keys[0] as string, 'victim-1');
      expect(paid.error).toBeUndefined();
      expect(paid.typename).toBe('CreateWithdrawalIntentSuccess');
      expect(posts()).toHaveLength(1);
      // Its replay sends nothing: its success is kept.
      gw.resetCalls();
      expect((await victim.withdraw(victim.keys[0] as string, 'victim-1')).restId).toBe(paid.restId);
      expect(posts()).toEqual([]);
      expect(await victim.intents()).toHaveLength(1);

      // The flooding key itself can still make a new keyed withdrawal: it forgets its own oldest refusal.
      const flooder = attacker.keys[0] as string;
      gw.resetCalls();
      const own = await attacker.withdraw(flooder, 'own-1');
      expect(own.typename).toBe('CreateWithdrawalIntentSuccess');
      expect(posts()).toHaveLength(1);
      expect(evicted).toBeGreaterThanOrEqual(1);

      // A forgotten refusal is sent again on retry, rather than replayed: at most one POST, and
      // refused again here (the balance did not change).
      gw.resetCalls();
      const again = await attacker.withdraw(flooder, 'flood-0', '999999.00');
      expect(again.typename).toBe('BalanceInsufficientError');
      expect(posts().length).toBeLessThanOrEqual(1);
      expect(await attacker.intents()).toHaveLength(1);
    });

    it('succeeded records are never forgotten: a key whose bound they fill is refused unsent, and every success still replays', async () => {
      const payer = await merchant(1);
      const key = payer.keys[0] as string;
      const paid: (string | null)[] = [];
      for (let i = 0; i < PER_CALLER; i++) {
        const ok = await payer.withdraw(key, `paid-${i}`);
        expect(ok.typename).toBe('CreateWithdrawalIntentSuccess');
        paid.push(ok.restId);
      }
      gw.resetCalls();
      const full = await payer.withdraw(key, 'paid-extra');
      expect(full.error).toMatchObject({
        code: 'IDEMPOTENCY_UNAVAILABLE',
        sent: false,
        reason: 'STORE_FULL',
      });
      expect(posts()).toEqual([]);
      for (let i = 0; i < PER_CALLER; i++) {
        expect((await payer.withdraw(key, `paid-${i}`)).restId).toBe(paid[i]);
      }
      expect(posts()).toEqual([]);
      expect(await payer.intents()).toHaveLength(PER_CALLER);
    });

    it('a bound held by successes and one refusal: the refusal goes first, then STORE_FULL', async () => {
      const payer = await merchant(1);
      const key = payer.keys[0] as string;
      expect((await payer.withdraw(key, 'poor', '999999.00')).typename).toBe('BalanceInsufficientError');
      for (let i = 1; i < PER_CALLER; i++) {
        expect((await payer.withdraw(key, `paid-${i}`)).typename).toBe('CreateWithdrawalIntentSuccess');
      }
      expect((await payer.withdraw(key, 'paid-last')).typename).toBe('CreateWithdrawalIntentSuccess');
      gw.resetCalls();
      const full = await payer.withdraw(key, 'paid-extra');
      expect(full.error).toMatchObject({ reason: 'STORE_FULL', sent: false });
      // The refusal was forgotten: its key is new again, and the successes leave it no room.
      const forgotten = await payer.withdraw(key, 'poor', '999999.00');
      expect(forgotten.error).toMatchObject({ reason: 'STORE_FULL', sent: false });
      expect(posts()).toEqual([]);
      expect(await payer.intents()).toHaveLength(PER_CALLER);
    });
  });
}

suite('in process', async (onEvicted) =>
  new MemoryIdempotencyStore({ maxKeys: STORE_KEYS, maxKeysPerCaller: PER_CALLER, onEvicted }));

suite('in Redis', async (onEvicted) => {
  redis = await startRedis();
  connection = await connectRedis(redis.url, pino({ level: 'silent' }));
  return new RedisIdempotencyStore(connection, { maxKeysPerCaller: PER_CALLER, onEvicted });
});
