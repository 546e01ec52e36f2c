import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatewayMetrics } from '../../../src/observability/metrics.ts';
import { createGatewayRuntime } from '../../../src/runtime.ts';
import { globalIdOf } from '../../../src/schema/global-ids.ts';
import { DEFAULTS, livePolling, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { parseMetrics, sampleSum } from '../../support/metrics.ts';
import { nextPoll, type ResultStream, subscribeSSE } from '../../support/subscriptions.ts';
import { recordSuiteKey } from '../../support/suite-logs.ts';

/**
 * Live deposits over GraphQL over SSE, against the sandbox: deposits made and moved on through its
 * admin API are the payments a checkout screen waits for, and the gateway's poller must find them.
 * Polls run every 20 ms here (no backoff); nothing waits on a clock, only on results and on the
 * poll counter.
 *
 * "Nothing else came" is shown with a sentinel: events of a stream arrive in order, so when the
 * next event is a deposit made last, nothing that should not have come came before it.
 */

const DEPOSITS = `subscription Deposits($walletId: ID, $status: [DepositStatus!]) {
  depositsUpdated(walletId: $walletId, status: $status) { id restId walletRestId status amount }
}`;

let t: TestGateway;
let merchant: { id: string; key: string; readOnlyKey: string };
let wallet1: string;
let wallet2: string;

beforeAll(async () => {
  t = await startTestGateway({ config: { subscriptions: { pollMs: 20, maxPollMs: 20, perKey: 150 } } });
  merchant = await t.sandbox.world.merchant();
  recordSuiteKey(merchant.key);
  wallet1 = (await t.sandbox.world.wallet(merchant.id)).id;
  wallet2 = (await t.sandbox.world.wallet(merchant.id)).id;
});
afterAll(() => t.close());
afterEach(async () => {
  // Every stream a test opened has ended, and so has every poller: nothing outlives its subscribers.
  await expect.poll(() => t.live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
});

/** A deposit made in the sandbox now; `pending` unless told (the admin API's default is completed). */
async function deposit(walletId: string, status = 'pending', amount = '12.50'): Promise<string> {
  return (await t.sandbox.world.deposit(walletId, { amount, status })).id as string;
}

/** The next event of `stream` as (restId, status, wallet). */
async function next(stream: ResultStream) {
  const result = await stream.next();
  expect(result?.errors).toBeUndefined();
  const value = result?.data.depositsUpdated;
  return value && { restId: value.restId, status: value.status, wallet: value.walletRestId };
}

const polled = () => nextPoll(t.metrics, 'deposits');

const depositReads = () => t.upstreamCalls().filter((call) => call.startsWith('GET /external/v1/deposits'));

async function pollsCounted(gateway = t): Promise<number> {
  return sampleSum(parseMetrics((await gateway.metrics.scrape()).body), 'gateway_subscription_polls_total', {
    feed: 'deposits',
  });
}

describe('depositsUpdated', () => {
  it('sends nothing at first, then a deposit made meanwhile, then each of its status changes, each once', async () => {
    // Deposits before the subscription, one of them still in flight: not news.
    await deposit(wallet1, 'completed');
    const inFlight = await deposit(wallet1, 'pending');
    const stream = await subscribeSSE(t.gateway, DEPOSITS, {}, merchant.key);
    expect(stream.status).toBe(200);
    await polled();

    const id = await deposit(wallet1, 'pending');
    const first = await stream.next();
    expect(first).toEqual({
      data: {
        depositsUpdated: {
          id: globalIdOf('Deposit', id),
          restId: id,
          walletRestId: wallet1,
          status: 'PENDING',
          amount: '12.5000000000000000',
        },
      },
    });
    for (const status of ['processing', 'completed']) {
      await t.sandbox.world.transitionDeposit(id, status);
      expect(await next(stream)).toEqual({ restId: id, status: status.toUpperCase(), wallet: wallet1 });
    }
    // The deposit in flight at subscribe time was not sent, but its change is news.
    await t.sandbox.world.transitionDeposit(inFlight, 'completed');
    expect(await next(stream)).toEqual({ restId: inFlight, status: 'COMPLETED', wallet: wallet1 });
    // Several polls later, nothing was sent twice and the settled deposit never came.
    await polled();
    await polled();
    const sentinel = await deposit(wallet2, 'completed');
    expect(await next(stream)).toEqual({ restId: sentinel, status: 'COMPLETED', wallet: wallet2 });
    stream.close();
  });

  it('only deposits into `walletId` (global or REST id), and only with the statuses asked for', async () => {
    const all = await subscribeSSE(t.gateway, DEPOSITS, {}, merchant.key);
    const checkout = await subscribeSSE(
      t.gateway,
      DEPOSITS,
      { walletId: globalIdOf('Wallet', wallet1) },
      merchant.key,
    );
    const paid = await subscribeSSE(
      t.gateway,
      DEPOSITS,
      { walletId: wallet2, status: ['COMPLETED'] },
      merchant.key,
    );
    // One poller for the key, whatever each subscriber filters on.
    await polled();
    expect(t.live.activity()).toEqual({ subscriptions: 3, pollers: 1 });

    const intoTwo = await deposit(wallet2, 'pending');
    expect(await next(all)).toEqual({ restId: intoTwo, status: 'PENDING', wallet: wallet2 });
    const intoOne = await deposit(wallet1, 'pending');
    expect(await next(all)).toEqual({ restId: intoOne, status: 'PENDING', wallet: wallet1 });
    await t.sandbox.world.transitionDeposit(intoTwo, 'completed');
    expect(await next(all)).toEqual({ restId: intoTwo, status: 'COMPLETED', wallet: wallet2 });
    await t.sandbox.world.transitionDeposit(intoOne, 'failed');
    expect(await next(all)).toEqual({ restId: intoOne, status: 'FAILED', wallet: wallet1 });

    // Wallet 1's screen saw wallet 1's deposit move, nothing of wallet 2's.
    expect(await next(checkout)).toEqual({ restId: intoOne, status: 'PENDING', wallet: wallet1 });
    expect(await next(checkout)).toEqual({ restId: intoOne, status: 'FAILED', wallet: wallet1 });
    // Wallet 2's "payment received" screen saw the payment once it was completed, and only then.
    expect(await next(paid)).toEqual({ restId: intoTwo, status: 'COMPLETED', wallet: wallet2 });

    const sentinelOne = await deposit(wallet1, 'completed');
    const sentinelTwo = await deposit(wallet2, 'completed');
    expect(await next(checkout)).toEqual({ restId: sentinelOne, status: 'COMPLETED', wallet: wallet1 });
    expect(await next(paid)).toEqual({ restId: sentinelTwo, status: 'COMPLETED', wallet: wallet2 });
    for (const stream of [all, checkout, paid]) stream.close();
  });

  it("never shows another merchant's deposit, made between this merchant's polls, while both watch", async () => {
    const other = await t.sandbox.world.merchant();
    recordSuiteKey(other.key);
    const otherWallet = (await t.sandbox.world.wallet(other.id)).id;
    const mine = await subscribeSSE(t.gateway, DEPOSITS, {}, merchant.key);
    const theirs = await subscribeSSE(t.gateway, DEPOSITS, {}, other.key);
    // Each key is its own feed.
    await polled();
    await expect.poll(() => t.live.activity()).toEqual({ subscriptions: 2, pollers: 2 });

    // Their deposit appears and settles between two of my polls and across many more.
    await polled();
    const foreign = await deposit(otherWallet, 'pending');
    expect(await next(theirs)).toEqual({ restId: foreign, status: 'PENDING', wallet: otherWallet });
    await t.sandbox.world.transitionDeposit(foreign, 'completed');
    expect(await next(theirs)).toEqual({ restId: foreign, status: 'COMPLETED', wallet: otherWallet });
    await polled();
    await polled();

    // My next event is my own deposit: theirs never came before it.
    const own = await deposit(wallet1, 'completed');
    expect(await next(mine)).toEqual({ restId: own, status: 'COMPLETED', wallet: wallet1 });
    // And mine never reached them.
    const theirSentinel = await deposit(otherWallet, 'completed');
    expect(await next(theirs)).toEqual({ restId: theirSentinel, status: 'COMPLETED', wallet: otherWallet });
    mine.close();
    theirs.close();
  });

  it("refuses another merchant's wallet with NOT_FOUND, exactly as an unknown one, before any deposit is read", async () => {
    const other = await t.sandbox.world.merchant();
    recordSuiteKey(other.key);
    const unknown = '00000000-0000-4000-8000-000000000000';
    t.resetCalls();
    const answers = [];
    for (const walletId of [wallet1, globalIdOf('Wallet', wallet1), unknown]) {
      const refused = await subscribeSSE(t.gateway, DEPOSITS, { walletId }, other.key);
      answers.push(await refused.rest());
    }
    const notFound = (id: string) => [
      {
        errors: [
          {
            message: `No wallet ${id} exists for this merchant.`,
            locations: [{ line: 2, column: 3 }],
            path: ['depositsUpdated'],
            extensions: { code: 'NOT_FOUND', id },
          },
        ],
      },
    ];
    expect(answers).toEqual([notFound(wallet1), notFound(wallet1), notFound(unknown)]);
    // One wallet read each; no poller started, no deposit read.
    expect(t.upstreamCalls()).toEqual([
      `GET /external/v1/wallets/${wallet1}`,
      `GET /external/v1/wallets/${wallet1}`,
      `GET /external/v1/wallets/${unknown}`,
    ]);
    expect(t.live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
  });

  it('refuses a malformed or wrong-type walletId and an UNKNOWN status with BAD_USER_INPUT, and no key with UNAUTHENTICATED, before any REST call', async () => {
    t.resetCalls();
    const codes = [];
    for (const [variables, key] of [
      [{ walletId: 'not an id' }, merchant.key],
      [{ walletId: globalIdOf('Deposit', 'd_1') }, merchant.key],
      [{ status: ['UNKNOWN'] }, merchant.key],
      [{}, null],
    ] as const) {
      const stream = await subscribeSSE(t.gateway, DEPOSITS, variables, key);
      const [result] = await stream.rest();
      codes.push([result?.errors?.[0].extensions.code, result?.errors?.[0].extensions.field]);
    }
    expect(codes).toEqual([
      ['BAD_USER_INPUT', ['walletId']],
      ['BAD_USER_INPUT', ['walletId']],
      ['BAD_USER_INPUT', ['status']],
      ['UNAUTHENTICATED', undefined],
    ]);
    expect(t.upstreamCalls()).toEqual([]);
  });

  it('answers a walletId the REST API refuses as malformed as wallet(id:) does: BAD_USER_INPUT naming walletId', async () => {
    const query = await t.request(
      'query($id: ID!) { wallet(id: $id) { id } }',
      { id: 'garbage' },
      {
        key: merchant.key,
      },
    );
    const stream = await subscribeSSE(t.gateway, DEPOSITS, { walletId: 'garbage' }, merchant.key);
    const [result] = await stream.rest();
    expect(result?.errors).toEqual([
      {
        message: query.body.errors?.[0].message.replace(/^id /, 'walletId '),
        locations: [{ line: 2, column: 3 }],
        path: ['depositsUpdated'],
        extensions: {
          code: 'BAD_USER_INPUT',
          field: ['walletId'],
          upstream: { status: 400, code: 'bad_request' },
        },
      },
    ]);
    expect(result?.errors?.[0].message).toMatch(
      /^walletId must be a global id of a Wallet or its REST id; as a REST id it was refused/,
    );
  });

  it('ends with UNAUTHENTICATED once the REST API stops accepting the key (revoked)', async () => {
    const key = await t.sandbox.admin('POST', `/merchants/${merchant.id}/api-keys`, {
      name: 'to revoke',
      access: 'read_only',
    });
    recordSuiteKey(key.key);
    const stream = await subscribeSSE(t.gateway, DEPOSITS, { walletId: wallet1 }, key.key);
    await polled();
    await t.sandbox.admin('POST', `/api-keys/${key.id}/revoke`);
    expect(await stream.rest()).toEqual([
      {
        data: null,
        errors: [
          {
            message: 'The REST API no longer accepts this API key.',
            extensions: { code: 'UNAUTHENTICATED' },
          },
        ],
      },
    ]);
  });

  it('a poll is one REST read of the newest deposits, however many screens of the key watch', async () => {
    t.resetCalls();
    const polledBefore = await pollsCounted();
    const streams = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        subscribeSSE(t.gateway, DEPOSITS, i % 2 ? { walletId: wallet1 } : {}, merchant.key),
      ),
    );
    await polled();
    expect(t.live.activity()).toEqual({ subscriptions: 50, pollers: 1 });
    const id = await deposit(wallet1, 'completed');
    const firsts = await Promise.all(streams.map((stream) => next(stream)));
    expect(firsts.every((first) => first?.restId === id)).toBe(true);
    for (const stream of streams) stream.close();
    await expect.poll(() => t.live.activity().pollers).toBe(0);

    // The first read (the newest page and the in-flight ones, shared by all 50), then one read
    // per poll; the wallet checks are the only other calls.
    const polls = async () => (await pollsCounted()) - polledBefore;
    await expect.poll(async () => depositReads().length - (await polls())).toBe(2);
    expect(await polls()).toBeGreaterThan(0);
    expect(new Set(depositReads())).toEqual(
      new Set([
        'GET /external/v1/deposits?page=1&size=50',
        'GET /external/v1/deposits?page=1&size=20&statusIn=pending,processing',
      ]),
    );
    // (Checks of one wallet at the same moment share their read.)
    expect(
      new Set(t.upstreamCalls().filter((call) => !call.startsWith('GET /external/v1/deposits'))),
    ).toEqual(new Set([`GET /external/v1/wallets/${wallet1}`]));
  });

  it('follows a deposit still in flight that is no longer among the newest 50, until it settles', async () => {
    const old = await deposit(wallet1, 'pending');
    for (let i = 0; i < 55; i++) await deposit(wallet2, 'completed', '1');
    const stream = await subscribeSSE(t.gateway, DEPOSITS, { status: ['COMPLETED'] }, merchant.key);
    await polled();
    await t.sandbox.world.transitionDeposit(old, 'completed');
    expect(await next(stream)).toEqual({ restId: old, status: 'COMPLETED', wallet: wallet1 });
    // Settled: no longer read on its own.
    await polled();
    t.resetCalls();
    await polled();
    await polled();
    expect(t.upstreamCalls().filter((call) => call.includes(old))).toEqual([]);
    stream.close();
  });
});

describe('each event as a request of its own', () => {
  it("reads an event's nested fields then, past the subscribing request's deadline: the wallet's balance after each payment", async () => {
    // A deadline of 2 s for every request, the subscribing one included: ample for one event's
    // reads on a busy machine, and short enough for the test to outlast it.
    const short = await startTestGateway({
      config: { requestDeadlineMs: 2_000, subscriptions: { pollMs: 20, maxPollMs: 20 } },
    });
    try {
      const owner = await short.sandbox.world.merchant();
      recordSuiteKey(owner.key);
      const wallet = (await short.sandbox.world.wallet(owner.id, { USDT: '100', TRX: '10' })).id;
      const stream = await subscribeSSE(
        short.gateway,
        `subscription { depositsUpdated { restId wallet { asset(currencyCode: "USDT") { balance { availableAmount } } } } }`,
        {},
        owner.key,
      );
      // The subscribing request arrived before this: its deadline is over 2.5 s from now at the latest.
      const subscribedAt = performance.now();
      await nextPoll(short.metrics, 'deposits');
      const balances = [];
      for (const amount of ['5', '7']) {
        // Past the deadline of the request that subscribed, with the poller still polling.
        await expect.poll(() => performance.now() - subscribedAt, { interval: 100 }).toBeGreaterThan(2_500);
        await nextPoll(short.metrics, 'deposits');
        const id = (await short.sandbox.world.deposit(wallet, { amount })).id;
        const result = await stream.next();
        expect(result?.errors).toBeUndefined();
        expect(result?.data.depositsUpdated.restId).toBe(id);
        balances.push(result?.data.depositsUpdated.wallet.asset.balance.availableAmount);
      }
      expect(balances).toEqual(['105.0000000000000000', '112.0000000000000000']);
      stream.close();
      await expect.poll(() => short.live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
    } finally {
      await short.close();
    }
  });
});

describe('limits', () => {
  it('counts deposit subscriptions against SUBSCRIPTIONS_PER_KEY and MAX_SUBSCRIPTIONS; a refused wallet holds no place', async () => {
    const limited = await startTestGateway({
      config: { subscriptions: { pollMs: 20, maxPollMs: 20, perKey: 2, max: 3 } },
    });
    try {
      const owner = await limited.sandbox.world.merchant();
      recordSuiteKey(owner.key);
      const other = await limited.sandbox.world.merchant();
      recordSuiteKey(other.key);
      const wallet = (await limited.sandbox.world.wallet(owner.id)).id;
      const first = await subscribeSSE(limited.gateway, DEPOSITS, { walletId: wallet }, owner.key);
      // Another merchant's wallet is refused, and gives its place back.
      for (let i = 0; i < 3; i++) {
        const refused = await subscribeSSE(limited.gateway, DEPOSITS, { walletId: wallet }, other.key);
        expect((await refused.rest())[0]?.errors?.[0].extensions.code).toBe('NOT_FOUND');
      }
      const second = await subscribeSSE(limited.gateway, DEPOSITS, {}, owner.key);
      await nextPoll(limited.metrics, 'deposits');
      expect(limited.live.activity()).toEqual({ subscriptions: 2, pollers: 1 });

      const overKey = await subscribeSSE(limited.gateway, DEPOSITS, {}, owner.key);
      expect(await overKey.rest()).toEqual([
        {
          errors: [
            expect.objectContaining({
              path: ['depositsUpdated'],
              extensions: expect.objectContaining({ code: 'SUBSCRIPTION_LIMIT_EXCEEDED', limit: 2 }),
            }),
          ],
        },
      ]);
      const third = await subscribeSSE(limited.gateway, DEPOSITS, {}, other.key);
      await expect.poll(() => limited.live.activity()).toEqual({ subscriptions: 3, pollers: 2 });
      const overAll = await subscribeSSE(limited.gateway, DEPOSITS, {}, owner.readOnlyKey);
      expect((await overAll.rest())[0]?.errors?.[0].extensions).toEqual(
        expect.objectContaining({ code: 'SUBSCRIPTION_LIMIT_EXCEEDED', limit: 3 }),
      );

      // One ends: its place is free again, and the others still get news.
      first.close();
      await expect.poll(() => limited.live.activity().subscriptions).toBe(2);
      const again = await subscribeSSE(limited.gateway, DEPOSITS, { walletId: wallet }, owner.key);
      await nextPoll(limited.metrics, 'deposits');
      const id = (await limited.sandbox.world.deposit(wallet, { amount: '5' })).id;
      expect((await again.next())?.data.depositsUpdated.restId).toBe(id);
      expect((await second.next())?.data.depositsUpdated.restId).toBe(id);
      for (const stream of [again, second, third]) stream.close();
      await expect.poll(() => limited.live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
    } finally {
      await limited.close();
    }
  });
});

describe('catch-up after lost news', () => {
  it('a deposit published while the delivery of news was down reaches the subscriber at catch-up, once', async () => {
    // Events that go nowhere while `down`, as Redis pub/sub while this process's subscriber
    // connection is down (the fleet tests kill that connection for real).
    const target = new EventTarget();
    let down = false;
    const published: string[] = [];
    const events = {
      addEventListener: target.addEventListener.bind(target),
      removeEventListener: target.removeEventListener.bind(target),
      dispatchEvent: (event: Event) => {
        published.push(event.type);
        return down ? true : target.dispatchEvent(event);
      },
    };
    const metrics = new GatewayMetrics({ maxOperationNames: 10, processMetrics: false });
    const live = livePolling(t.client, pino({ level: 'silent' }), {
      events,
      pollMs: 20,
      maxPollMs: 20,
      metrics,
    });
    await using runtime = await createGatewayRuntime(DEFAULTS, {
      logger: pino({ level: 'silent' }),
      client: t.client,
      live,
      processMetrics: false,
    });
    const { gateway } = runtime;
    try {
      const stream = await subscribeSSE(gateway, DEPOSITS, { walletId: wallet1 }, merchant.key);
      await nextPoll(metrics, 'deposits');

      live.deliveryLost();
      down = true;
      const id = await deposit(wallet1, 'pending');
      // The poller saw it and published it, into the void.
      await expect.poll(() => published.length).toBe(1);
      await t.sandbox.world.transitionDeposit(id, 'completed');
      await expect.poll(() => published.length).toBe(2);

      down = false;
      await live.catchUp();
      // What the subscriber missed since it was last served: the deposit as it is now.
      expect(await next(stream)).toEqual({ restId: id, status: 'COMPLETED', wallet: wallet1 });
      const sentinel = await deposit(wallet1, 'completed');
      expect(await next(stream)).toEqual({ restId: sentinel, status: 'COMPLETED', wallet: wallet1 });
      stream.close();
      await expect.poll(() => live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
    } finally {
      live.close();
    }
  });
});
