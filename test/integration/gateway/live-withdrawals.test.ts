import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS, seedWorld } from '../../../src/sandbox/seed.ts';
import type { WithdrawalStatus } from '../../../src/sandbox/store/records.ts';
import { pollCaller } from '../../../src/subscriptions/poller.ts';
import { withdrawalIntentsFeed } from '../../../src/subscriptions/withdrawal-feeds.ts';
import type { WithdrawalIntentDTO } from '../../../src/upstream/types.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { withdrawalBody } from '../../support/sandbox.ts';
import { nextPoll, subscribeSSE } from '../../support/subscriptions.ts';

/**
 * The withdrawal-list feed at a big merchant (the seeded world with 10,000 intents, about 2,000
 * of them still in flight across its 90 days): what each poll costs in REST calls, counted by the
 * sandbox, and that every intent that changes status is reported once per status however far
 * down the list it is. The feed is driven poll by poll (as its poller drives it) so that each
 * poll's calls are counted alone; the last test watches the same through the gateway over SSE.
 */

const OPEN = 'pending,preparing,reviewing';
const NEWEST_PAGE = 'GET /external/v1/withdrawal-intents?page=1&size=50';
const IN_FLIGHT_PAGE = `GET /external/v1/withdrawal-intents?page=1&size=1000&statusIn=${OPEN}`;
const key = DEMO_KEYS.acmeReadWrite;

let t: TestGateway;
/** Acme's intents in flight at the start, newest first (as the REST API lists them). */
let inFlight: WithdrawalIntentDTO[];

beforeAll(async () => {
  const { store } = seedWorld({ wallets: 20, deposits: 1_000, withdrawals: 10_000 });
  t = await startTestGateway({ store, config: { subscriptions: { pollMs: 20, maxPollMs: 20 } } });
  const caller = t.client.caller(`Bearer ${key}`);
  inFlight = [];
  for (let page = 1; ; page++) {
    const { items } = await t.client.listWithdrawalIntents(caller, {
      page,
      size: 1000,
      statusIn: OPEN.split(','),
    });
    inFlight.push(...items);
    if (items.length < 1000) break;
  }
});
afterAll(() => t.close());
afterEach(async () => {
  await expect.poll(() => t.live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
});

/** The next status on the happy path, or `cancelled`/`completed` to settle. */
const NEXT: Record<string, WithdrawalStatus> = {
  preparing: 'reviewing',
  reviewing: 'pending',
  pending: 'completed',
};
const SETTLE: Record<string, WithdrawalStatus> = {
  preparing: 'cancelled',
  reviewing: 'cancelled',
  pending: 'completed',
};
const statusOf = (id: string) => t.sandbox.store.withdrawals.get(id)?.status as string;
/** Moves intent `id` on (in the sandbox's store: no REST call to count), returning `id:status`. */
function move(id: string, to: Record<string, WithdrawalStatus>): string {
  const status = to[statusOf(id)] as WithdrawalStatus;
  t.sandbox.store.transitionWithdrawal(id, status);
  return `${id}:${status}`;
}

function feedDriver() {
  const feed = withdrawalIntentsFeed(t.client, 'scope');
  const caller = () =>
    pollCaller(
      { client: t.client, requestDeadlineMs: 10_000, maxUpstreamCallsPerRequest: 100 },
      `Bearer ${key}`,
    );
  let state = undefined as unknown as Awaited<ReturnType<typeof feed.begin>>;
  return {
    async begin() {
      t.resetCalls();
      state = await feed.begin(caller());
      return t.upstreamCalls();
    },
    /** One poll: what it reported (`id:status`, oldest first) and the REST calls it made. */
    async poll() {
      t.resetCalls();
      const result = await feed.poll(caller(), state);
      state = result.state;
      return { changed: result.changed.map((i) => `${i.id}:${i.status}`), calls: t.upstreamCalls() };
    },
  };
}

describe('withdrawalIntentsUpdated at 10,000 intents', () => {
  it('world: about 2,000 intents in flight, most of them far below the newest page', () => {
    expect(inFlight.length).toBeGreaterThan(1_500);
  });

  it('a poll is two REST reads: the newest page and the in-flight page', async () => {
    const feed = feedDriver();
    expect(await feed.begin()).toEqual([NEWEST_PAGE, IN_FLIGHT_PAGE]);
    for (let i = 0; i < 5; i++)
      expect(await feed.poll()).toEqual({ changed: [], calls: [NEWEST_PAGE, IN_FLIGHT_PAGE] });
  });

  it('reports each status of an intent far down the list, once, still at two reads a poll (three when it settles)', async () => {
    const feed = feedDriver();
    await feed.begin();
    // About 2,500 intents back in the merchant's list.
    const deep = (inFlight.find((i, n) => n >= 500 && i.status === 'preparing') as WithdrawalIntentDTO).id;
    const steps = [move(deep, NEXT)];
    expect(await feed.poll()).toEqual({ changed: steps, calls: [NEWEST_PAGE, IN_FLIGHT_PAGE] });
    expect(await feed.poll()).toEqual({ changed: [], calls: [NEWEST_PAGE, IN_FLIGHT_PAGE] });
    const next = move(deep, NEXT);
    expect(await feed.poll()).toEqual({ changed: [next], calls: [NEWEST_PAGE, IN_FLIGHT_PAGE] });
    // It settles: it left the in-flight page, so it alone is read by id, once.
    const settled = move(deep, NEXT);
    expect(await feed.poll()).toEqual({
      changed: [settled],
      calls: [NEWEST_PAGE, IN_FLIGHT_PAGE, `GET /external/v1/withdrawal-intents/${deep}`],
    });
    expect(await feed.poll()).toEqual({ changed: [], calls: [NEWEST_PAGE, IN_FLIGHT_PAGE] });
  });

  it('reports many intents settling at once, each once, reading at most 20 by id per poll', async () => {
    const feed = feedDriver();
    await feed.begin();
    // 30 intents spread over the in-flight list, 50 to 950 deep, all settle between two polls.
    const ids = Array.from({ length: 30 }, (_, n) => (inFlight[50 + n * 30] as WithdrawalIntentDTO).id);
    const settled = ids.map((id) => move(id, SETTLE));
    const first = await feed.poll();
    const second = await feed.poll();
    const third = await feed.poll();
    expect([...first.changed, ...second.changed].sort()).toEqual([...settled].sort());
    expect(first.calls.length).toBe(2 + 20);
    expect(second.calls.length).toBe(2 + 10);
    expect(third).toEqual({ changed: [], calls: [NEWEST_PAGE, IN_FLIGHT_PAGE] });
  });

  it('over SSE: an intent far down the list that changes status is sent, before a new intent made after it', async () => {
    const INTENTS = 'subscription { withdrawalIntentsUpdated { restId status } }';
    const stream = await subscribeSSE(t.gateway, INTENTS, {}, key);
    await nextPoll(t.metrics, 'withdrawal_intents');
    const deep = (inFlight.find((i, n) => n >= 700 && statusOf(i.id) === 'reviewing') as WithdrawalIntentDTO)
      .id;
    move(deep, NEXT);
    expect((await stream.next())?.data.withdrawalIntentsUpdated).toEqual({ restId: deep, status: 'PENDING' });
    const walletId = t.sandbox.store.withdrawals.get(deep)?.walletId as string;
    const created = await t.sandbox.call('POST', '/external/v1/withdrawal-intents', {
      key,
      body: withdrawalBody(walletId, { amount: '1.00' }),
    });
    expect(created.status).toBe(201);
    move(deep, NEXT);
    // The deep intent's completion and the new intent, in whichever poll order; nothing else.
    const two = [
      (await stream.next())?.data.withdrawalIntentsUpdated,
      (await stream.next())?.data.withdrawalIntentsUpdated,
    ];
    expect(two).toContainEqual({ restId: deep, status: 'COMPLETED' });
    expect(two).toContainEqual({ restId: created.body.data.id, status: 'PREPARING' });
    stream.close();
  });
});
