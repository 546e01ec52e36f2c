import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../../src/errors/errors.ts';
import { encodeEventId, versionTag } from '../../src/subscriptions/event-ids.ts';
import type { Feed, LiveEvent } from '../../src/subscriptions/feed.ts';
import { MerchantWalletClient } from '../../src/upstream/client.ts';
import { DEFAULTS, livePolling } from '../support/gateway.ts';

/**
 * The poller's schedule, on a fake clock: the interval doubles while nothing changes, up to its
 * ceiling, and drops back to the first one at a change; a final value stops it. The feed here is
 * a counter (no REST API): what is under test is LivePolling's timing alone.
 */

interface Value {
  id: string;
  n: number;
  last: boolean;
}

let client: MerchantWalletClient;
beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
  client = new MerchantWalletClient({ ...DEFAULTS.upstream, baseURL: 'http://127.0.0.1:9' });
});
afterEach(async () => {
  vi.useRealTimers();
  await client.close();
});

/** What these feeds answer for positions: none is resumed here (event ids: event-ids.test.ts). */
const noResume: Pick<Feed<Value, Value>, 'position' | 'advance' | 'resume'> = {
  position: () => ({ followed: [] }),
  advance: (position) => position,
  resume: () => Promise.reject(new Error('not resumed in these tests')),
};

function counterFeed(changesAt: Set<number>, lastAt: number) {
  const polledAt: number[] = [];
  const feed: Feed<Value, Value> = {
    name: 'counter:scope:1',
    kind: 'withdrawal_intent',
    begin: async () => ({ id: '1', n: 0, last: false }),
    initial: (state) => [state],
    poll: async (_caller, state) => {
      polledAt.push(Date.now());
      const poll = polledAt.length;
      if (!changesAt.has(poll)) return { state, changed: [] };
      const next = { id: '1', n: state.n + 1, last: poll === lastAt };
      return { state: next, changed: [next] };
    },
    version: (value) => String(value.n),
    isLast: (value) => value.last,
    ...noResume,
  };
  return { feed, polledAt };
}

describe('LivePolling schedule', () => {
  it('backs off 10, 20, 40, 40 ms while nothing changes, drops back to 10 after a change, stops at a final value', async () => {
    const live = livePolling(client, pino({ level: 'silent' }), { pollMs: 10, maxPollMs: 40 });
    const { feed, polledAt } = counterFeed(new Set([5, 7]), 7);
    const stream = await live.open(client.caller('Bearer k'), feed);
    const seen: number[] = [];
    const reading = (async () => {
      for await (const event of stream) if (event.kind === 'update') seen.push(event.value.n);
    })();
    await vi.advanceTimersByTimeAsync(1_000);
    await reading;
    // Polls 1-4 saw nothing (intervals 10, 20, 40, 40), poll 5 a change (next in 10), poll 6
    // nothing (then 20), poll 7 the final value: the poller stopped there.
    expect(polledAt).toEqual([10, 30, 70, 110, 150, 160, 180]);
    expect(seen).toEqual([0, 1, 2]);
    expect(live.activity()).toEqual({ subscriptions: 0, pollers: 0 });
  });
});

describe('LivePolling catch-up', () => {
  it('after the delivery of events was lost, reads once and hands what changed, or the end of the feed, to the local subscribers only', async () => {
    // Events that go nowhere, as Redis pub/sub while this process's subscriber connection is down.
    const published: string[] = [];
    const lostEvents = {
      addEventListener: () => {},
      removeEventListener: () => {},
      dispatchEvent: (event: Event) => {
        published.push(event.type);
        return true;
      },
    };
    const live = livePolling(client, pino({ level: 'silent' }), {
      events: lostEvents,
      pollMs: 10,
      maxPollMs: 10,
    });
    let current: Value = { id: '1', n: 0, last: false };
    let polls = 0;
    let refused = false;
    const feed: Feed<Value, Value> = {
      name: 'current:scope:1',
      kind: 'withdrawal_intent',
      begin: async () => current,
      initial: (state) => [state],
      poll: async (_caller, state) => {
        polls += 1;
        if (refused) throw new GatewayError('UNAUTHENTICATED', 'revoked');
        return { state: current, changed: current.n === state.n ? [] : [current] };
      },
      version: (value) => String(value.n),
      isLast: (value) => value.last,
      ...noResume,
    };
    const stream = await live.open(client.caller('Bearer k'), feed);
    expect((await stream.next()).value).toEqual({ kind: 'update', value: current, id: expect.any(String) });

    live.deliveryLost();
    current = { id: '1', n: 1, last: false };
    await vi.advanceTimersByTimeAsync(10);
    // The poller saw the change and published it, into the void.
    expect(published).toEqual(['current:scope:1']);
    expect(polls).toBe(1);

    const next = stream.next();
    await live.catchUp();
    expect((await next).value).toEqual({ kind: 'update', value: current, id: expect.any(String) });
    // One read of its own; nothing published again to the fleet, which did not lose it.
    expect(polls).toBe(2);
    expect(published).toEqual(['current:scope:1']);

    // The key refused while the delivery was down: that `end` was lost too, the catch-up ends the stream.
    live.deliveryLost();
    refused = true;
    const ending = stream.next();
    await live.catchUp();
    expect((await ending).value).toEqual({ kind: 'end', code: 'UNAUTHENTICATED' });
    expect((await stream.next()).done).toBe(true);
    expect(polls).toBe(3);
    refused = false;

    // A feed whose subscribers all left before the delivery came back is not read.
    const again = await live.open(client.caller('Bearer k'), feed);
    await again.next();
    live.deliveryLost();
    await again.return?.();
    await live.catchUp();
    expect(polls).toBe(3);
    // And a catch-up without a loss before it reads nothing.
    await live.catchUp();
    expect(polls).toBe(3);
    live.close();
  });
});

describe('LivePolling resumes', () => {
  it('two subscribers resuming at once, the feed changing between their reads and the later read finishing first: both are shown the change, for one more read', async () => {
    const live = livePolling(client, pino({ level: 'silent' }), { pollMs: 10, maxPollMs: 10 });
    let current: Value = { id: '1', n: 0, last: false };
    let polls = 0;
    /** Per resume, in call order: lets it return what it read. */
    const finish: (() => void)[] = [];
    const positionOf = (value: Value) => ({
      followed: [{ id: value.id, tag: versionTag(String(value.n)), at: 0 }],
    });
    const feed: Feed<Value, Value> = {
      name: 'current:scope:1',
      kind: 'withdrawal_intent',
      begin: async () => current,
      initial: (state) => [state],
      poll: async (_caller, state) => {
        polls += 1;
        return { state: current, changed: current.n === state.n ? [] : [current] };
      },
      version: (value) => String(value.n),
      isLast: (value) => value.last,
      position: positionOf,
      advance: (_position, value) => positionOf(value),
      resume: async (_caller, position) => {
        const read = current;
        await new Promise<void>((resolve) => finish.push(resolve));
        const seen = position.followed[0]?.tag === versionTag(String(read.n));
        return { state: read, changed: seen ? [] : [read] };
      },
    };
    const caller = client.caller('Bearer k');
    const after = encodeEventId(feed.kind, positionOf(current), caller.authorization);

    const earlier = live.open(caller, feed, undefined, undefined, after);
    await vi.advanceTimersByTimeAsync(0);
    current = { id: '1', n: 1, last: false };
    const later = live.open(caller, feed, undefined, undefined, after);
    await vi.advanceTimersByTimeAsync(0);
    // The later read finishes first: the poller starts from n = 1, so its polls never show the
    // change to the subscriber that read n = 0.
    finish[1]?.();
    const laterStream = await later;
    finish[0]?.();
    const earlierStream = await earlier;
    // One read for the resume that found the poller's state read at another time; none for the other.
    expect(polls).toBe(1);

    const shown = (stream: AsyncIterableIterator<LiveEvent<Value>>) => {
      const values: number[] = [];
      void (async () => {
        for await (const event of stream) if (event.kind === 'update') values.push(event.value.n);
      })().catch(() => {});
      return values;
    };
    const earlierShown = shown(earlierStream);
    const laterShown = shown(laterStream);
    await vi.advanceTimersByTimeAsync(100);
    expect(earlierShown).toEqual([1]);
    expect(laterShown).toEqual([1]);
    await earlierStream.return?.();
    await laterStream.return?.();
    live.close();
  });
});
