import { type Feed, type LiveEvent, StreamInterrupted } from './feed.ts';

/**
 * One subscriber's stream: what it is shown first, then the events relayed to it, repeats dropped
 * and filtered by `accept`. It ends after a last value or an `end` event, or when `events` aborts:
 * quietly when the consumer left, with StreamInterrupted once `interrupted` aborted. `release` runs
 * when the stream ends, however it ends, even if it was never read (maybe more than once).
 */

/** Versions remembered per subscriber to drop repeats; oldest go first. */
const MAX_SEEN = 1_000;

export function subscriberStream<T extends { id: string }>(options: {
  feed: Feed<T, unknown>;
  initial: { kind: 'update'; value: T; id: string }[];
  events: AsyncIterable<unknown[]>;
  accept: (value: T) => boolean;
  release: () => void;
  interrupted: AbortSignal;
}): AsyncIterableIterator<LiveEvent<T>> {
  const { feed, initial, events, accept, release, interrupted } = options;
  const seen = new Map<string, string>();
  async function* stream(): AsyncGenerator<LiveEvent<T>> {
    try {
      for (const update of initial) {
        const { value } = update;
        seen.set(value.id, feed.version(value));
        if (accept(value)) yield update;
        if (feed.isLast(value)) return;
      }
      for await (const [message] of events) {
        const event = (message as CustomEvent<LiveEvent<T>>).detail;
        if (event.kind === 'end') {
          yield event;
          return;
        }
        const { value } = event;
        const version = feed.version(value);
        if (seen.get(value.id) === version) continue;
        seen.delete(value.id);
        seen.set(value.id, version);
        if (seen.size > MAX_SEEN) seen.delete(seen.keys().next().value as string);
        if (accept(value)) yield event;
        if (feed.isLast(value)) return;
      }
    } catch (error) {
      if ((error as Error).name !== 'AbortError') throw error;
      // The gateway is closing: not the end of the feed, so the client must reconnect, not finish.
      if (interrupted.aborted) throw new StreamInterrupted();
    } finally {
      release();
    }
  }
  const generator = stream();
  // A generator that was never started skips its `finally` on return(): release here too.
  const iterator: AsyncIterableIterator<LiveEvent<T>> = {
    [Symbol.asyncIterator]: () => iterator,
    next: () => generator.next(),
    return: (value?: unknown) => {
      release();
      return generator.return(value as undefined);
    },
    throw: (error?: unknown) => {
      release();
      return generator.throw(error);
    },
  };
  return iterator;
}
