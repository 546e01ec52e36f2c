import { createSchema, createYoga } from 'graphql-yoga';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useResumableStreams } from '../../../src/plugins/resumable-streams.ts';
import { type LiveEvent, liveValue, StreamInterrupted } from '../../../src/subscriptions/feed.ts';

type Step = LiveEvent<string> | { kind: 'throw'; error: Error };

/**
 * A subscription's source, as a feed's relay is: events handed out one `next()` at a time, a
 * `next()` past the script waiting until the stream is returned, and `returned` once it is.
 */
function source(steps: Step[]) {
  let step = 0;
  let wake: ((result: IteratorResult<LiveEvent<string>>) => void) | undefined;
  const state = { returned: false, ends: false };
  const iterator: AsyncIterableIterator<LiveEvent<string>> = {
    [Symbol.asyncIterator]() {
      return iterator;
    },
    async next() {
      const current = steps[step++];
      if (current?.kind === 'throw') throw current.error;
      if (current) return { done: false, value: current };
      if (state.ends) return { done: true, value: undefined };
      return new Promise((resolve) => (wake = resolve));
    },
    async return() {
      state.returned = true;
      wake?.({ done: true, value: undefined });
      return { done: true, value: undefined };
    },
  };
  return { iterator, state };
}

function gateway(steps: Step[], options: { ends?: boolean; refuseWith?: Error } = {}) {
  const feed = source(steps);
  feed.state.ends = options.ends ?? true;
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: 'type Query { greeting: String! } type Subscription { feed: String plain: String }',
      resolvers: {
        Query: { greeting: () => 'hi' },
        Subscription: {
          feed: {
            subscribe: () => {
              if (options.refuseWith) throw options.refuseWith;
              return feed.iterator;
            },
            // As every subscription field does: the event's value, its id noted for the result.
            resolve: liveValue,
          },
          plain: {
            async *subscribe() {
              yield { plain: 'no id' };
            },
          },
        },
      },
    }),
    logging: false,
    // Each event renews the caller (GatewayContext.renew); nothing to renew here.
    context: () => ({ renew() {} }),
    plugins: [useResumableStreams()],
  });
  const subscribe = (query = 'subscription { feed }', signal?: AbortSignal) =>
    yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query }),
      ...(signal && { signal }),
    });
  return { subscribe, state: feed.state };
}

const update = (id: string, value: string): LiveEvent<string> => ({ kind: 'update', id, value });
const next = (id: string, value: string) =>
  `id: ${id}\nevent: next\ndata: ${JSON.stringify({ data: { feed: value }, extensions: { eventId: id } })}\n\n`;
const COMPLETE = 'event: complete\ndata:\n\n';

async function read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const { value } = await reader.read();
  return new TextDecoder().decode(value);
}

/** Lets every callback already due run (promise jobs and immediates), without waiting for time. */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

afterEach(() => {
  vi.useRealTimers();
});

describe('useResumableStreams', () => {
  it("gives each event its id, as SSE's id and the result's eventId, and completes at a real end", async () => {
    const g = gateway([update('e1', 'one'), update('e2', 'two')]);
    const response = await g.subscribe();
    expect(response.status).toBe(200);
    expect(Object.fromEntries(response.headers)).toMatchObject({
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'content-encoding': 'none',
    });
    expect(await response.text()).toBe(`:\n\n${next('e1', 'one')}${next('e2', 'two')}${COMPLETE}`);
  });

  it("ends the response without `complete` when the stream stops for the gateway's shutdown, so clients reconnect", async () => {
    const g = gateway([
      update('e1', 'one'),
      { kind: 'throw', error: new StreamInterrupted() },
      update('e2', 'two'),
    ]);
    const response = await g.subscribe();
    expect(await response.text()).toBe(`:\n\n${next('e1', 'one')}`);
    expect(g.state.returned).toBe(true);
  });

  it('answers a subscription refused because the gateway is closing with a stream that ends at once', async () => {
    const g = gateway([], { refuseWith: new StreamInterrupted() });
    const response = await g.subscribe();
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(await response.text()).toBe(':\n\n');
  });

  it("completes after a feed's own end, whose error is sent without the internal http extensions", async () => {
    const g = gateway([update('e1', 'one'), { kind: 'end', code: 'UNAUTHENTICATED' }]);
    const text = await (await g.subscribe()).text();
    const events = text.split('\n\n');
    expect(`${events[1]}\n\n`).toBe(next('e1', 'one'));
    expect(events.at(-2)).toBe(COMPLETE.trimEnd());
    const ended = JSON.parse((events[2] as string).replace(/^event: next\ndata: /, ''));
    expect(ended).toEqual({
      data: { feed: null },
      errors: [
        {
          message: 'The REST API no longer accepts this API key.',
          locations: [{ line: 1, column: 16 }],
          path: ['feed'],
          extensions: { code: 'UNAUTHENTICATED' },
        },
      ],
    });
  });

  it('writes no id for results that were not resolved from an event', async () => {
    const text = await (await gateway([]).subscribe('subscription { plain }')).text();
    expect(text).toBe(`:\n\nevent: next\ndata: {"data":{"plain":"no id"}}\n\n${COMPLETE}`);
  });

  it('sends a comment every 12 s while the stream is quiet, and ends the subscription when the client cancels', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const g = gateway([update('e1', 'one')], { ends: false });
    const reader = (await g.subscribe()).body?.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    expect(await read(reader)).toBe(':\n\n');
    expect(await read(reader)).toBe(next('e1', 'one'));
    const quiet = read(reader);
    vi.advanceTimersByTime(12_000);
    expect(await quiet).toBe(':\n\n');
    await reader.cancel();
    expect(g.state.returned).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('ends the subscription when its request is aborted (the connection closed)', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const g = gateway([], { ends: false });
    const connection = new AbortController();
    const reader = (await g.subscribe('subscription { feed }', connection.signal)).body?.getReader();
    expect(await read(reader as ReadableStreamDefaultReader<Uint8Array>)).toBe(':\n\n');
    connection.abort();
    await settled();
    expect(g.state.returned).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});
