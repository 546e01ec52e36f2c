import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS, seedWorld } from '../../../src/sandbox/seed.ts';
import type { WithdrawalStatus } from '../../../src/sandbox/store/records.ts';
import { withdrawalIntentsFeed } from '../../../src/subscriptions/withdrawal-feeds.ts';
import { createCallers } from '../../../src/upstream/callers.ts';
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
const inFlightPage = (page: number) =>
  `GET /external/v1/withdrawal-intents?page=${page}&size=1000&statusIn=${OPEN}`;
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
  const polls = createCallers(t.client, { requestDeadlineMs: 10_000, maxUpstreamCallsPerRequest: 100 });
  const caller = () => polls.forRequest(`Bearer ${key}`);
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
  /** Pages of 1,000 the in-flight list spans: each poll reads the next in turn. */
  const pages = () => Math.ceil(inFlight.length / 1000);

  it('world: about 2,000 intents in flight, most of them far below the newest page', () => {
    expect(inFlight.length).toBeGreaterThan(1_500);
    expect(pages()).toBeGreaterThanOrEqual(2);
  });

  it('a poll is two REST reads: the newest page and one page of the in-flight list, in turn', async () => {
    const feed = feedDriver();
    // The first read learns the whole in-flight list: what it holds is followed from the start.
    expect(await feed.begin()).toEqual([
      NEWEST_PAGE,
      ...Array.from({ length: pages() }, (_, i) => inFlightPage(i + 1)),
    ]);
    for (let i = 0; i < 2 * pages(); i++) {
      expect(await feed.poll()).toEqual({
        changed: [],
        calls: [NEWEST_PAGE, inFlightPage((i % pages()) + 1)],
      });
    }
  });

  /** Polls until one reports something (within one turn of the pages), asserting each poll's calls. */
  async function untilReported(feed: ReturnType<typeof feedDriver>, extra: string[] = []) {
    for (let i = 0; i < pages(); i++) {
      const { changed, calls } = await feed.poll();
      if (changed.length > 0) {
        expect(calls).toEqual([NEWEST_PAGE, expect.stringMatching(/statusIn/), ...extra]);
        return changed;
      }
      expect(calls).toEqual([NEWEST_PAGE, expect.stringMatching(/statusIn/)]);
    }
    return [];
  }

  it('reports each status of an intent far down the list, once, at two reads a poll (three when it settles)', async () => {
    const feed = feedDriver();
    await feed.begin();
    // Over 1,500 intents in flight newer than it: on the second page, about 7,500 back in the list.
    const deep = (inFlight.find((i, n) => n >= 1_500 && i.status === 'preparing') as WithdrawalIntentDTO).id;
    let step = move(deep, NEXT);
    expect(await untilReported(feed)).toEqual([step]);
    step = move(deep, NEXT);
    expect(await untilReported(feed)).toEqual([step]);
    // It settles: it left the in-flight list, so it alone is read by id, once.
    step = move(deep, NEXT);
    expect(await untilReported(feed, [`GET /external/v1/withdrawal-intents/${deep}`])).toEqual([step]);
    // Nothing more, for a whole turn.
    expect(await untilReported(feed)).toEqual([]);
  });

  it('reports many intents settling at once, each once, reading at most 20 by id a poll', async () => {
    const feed = feedDriver();
    await feed.begin();
    // 40 intents spread over the whole in-flight list settle between two polls.
    const spread = Math.floor(inFlight.length / 40);
    const ids = Array.from({ length: 40 }, (_, n) => (inFlight[n * spread] as WithdrawalIntentDTO).id);
    const settled = ids.map((id) => move(id, SETTLE));
    const reported: string[] = [];
    for (let i = 0; i < 3 * pages(); i++) {
      const { changed, calls } = await feed.poll();
      reported.push(...changed);
      expect(calls.length).toBeLessThanOrEqual(2 + 20);
    }
    expect(reported.sort()).toEqual([...settled].sort());
  });

  it('over SSE: an intent on the second page of the in-flight list is sent at each status, a new intent too', async () => {
    const INTENTS = 'subscription { withdrawalIntentsUpdated { restId status } }';
    const stream = await subscribeSSE(t.gateway, INTENTS, {}, key);
    await nextPoll(t.metrics, 'withdrawal_intents');
    const deep = (
      inFlight.find((i, n) => n >= 1_500 && statusOf(i.id) === 'reviewing') as WithdrawalIntentDTO
    ).id;
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
