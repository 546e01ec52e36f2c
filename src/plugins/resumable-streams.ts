import type { ExecutionResult, GraphQLError } from 'graphql';
import { type FetchAPI, isAsyncIterable, type Plugin } from 'graphql-yoga';
import { eventIdOf, StreamInterrupted } from '../subscriptions/feed.ts';

/**
 * How a subscription's results leave over GraphQL over SSE (`Accept: text/event-stream`; the
 * WebSocket bridge in websocket/bridge.ts reads the same stream), in place of Yoga's own SSE writer for
 * subscriptions (queries and @defer/@stream keep Yoga's):
 *
 * - Every `next` event carries the id of its event (`id:` line), the same text as the result's
 *   `extensions.eventId` (see eventIdOf in subscriptions/feed.ts for what it is). EventSource sends
 *   the last one back as `Last-Event-ID` when it reconnects; other clients pass it as the
 *   subscription's `after` argument.
 * - A stream that ends because the gateway is shutting down (StreamInterrupted) ends the response
 *   without `event: complete`: graphql-sse's client treats that as a dropped connection and
 *   retries, EventSource reconnects; only a real end (a final status, a refused key) completes.
 *
 * Otherwise it writes what Yoga's writer writes: a first comment so headers flush, a comment
 * every PING_MS, `event: next` per result without the errors' internal `http` extensions, and
 * `event: complete` at the end.
 */

/** A comment this often keeps proxies from closing a quiet stream (Yoga's own interval). */
const PING_MS = 12_000;

export function useResumableStreams(): Plugin {
  const subscriptions = new WeakSet<Request>();
  return {
    onSubscribe({ args }) {
      const context = args.contextValue as { request?: Request };
      if (context.request) subscriptions.add(context.request);
      return {
        onSubscribeResult: () => ({
          // Each result is resolved from one event (liveValue), just before it gets here.
          onNext({ result, setResult }) {
            const eventId = eventIdOf(context);
            if (eventId) setResult({ ...result, extensions: { ...result.extensions, eventId } });
          },
        }),
      };
    },
    onResultProcess({ request, result, resultProcessor, setResultProcessor }) {
      // Yoga's own choice ran first: for a subscription's stream it can only be its SSE writer.
      if (!resultProcessor || !subscriptions.has(request)) return;
      if (!isAsyncIterable(result)) {
        // Refused because the gateway is closing: a stream that ends at once, so clients retry.
        if (!Array.isArray(result) && result.errors?.some(isInterrupted)) {
          setResultProcessor((_result, fetchAPI) => interrupted(fetchAPI), 'text/event-stream');
        }
        return;
      }
      setResultProcessor(
        (stream, fetchAPI) => eventStream(stream as AsyncIterable<ExecutionResult>, fetchAPI, request.signal),
        'text/event-stream',
      );
    },
  };
}

/**
 * The response of one subscription. The subscription ends (its iterator returned) when the client
 * cancels the body or its request is aborted (the connection closed), whichever comes first: a
 * reader waiting for the next chunk notices a cancel only then.
 */
function eventStream(
  results: AsyncIterable<ExecutionResult>,
  fetchAPI: FetchAPI,
  gone: AbortSignal,
): Response {
  const encoder = new fetchAPI.TextEncoder();
  const iterator = results[Symbol.asyncIterator]();
  let ping: ReturnType<typeof setInterval> | undefined;
  let left = false;
  const leave = () => {
    if (left) return;
    left = true;
    clearInterval(ping);
    gone.removeEventListener('abort', leave);
    return iterator.return?.();
  };
  const body = new fetchAPI.ReadableStream<Uint8Array>({
    start(controller) {
      // Some browsers wait for the first bytes before they hand the response over.
      controller.enqueue(encoder.encode(':\n\n'));
      ping = setInterval(() => {
        if (controller.desiredSize === null) clearInterval(ping);
        else if (controller.desiredSize > 0) controller.enqueue(encoder.encode(':\n\n'));
      }, PING_MS);
      gone.addEventListener('abort', leave, { once: true });
    },
    async pull(controller) {
      try {
        const { done, value } = await iterator.next();
        if (left) return closeQuietly(controller);
        // The executor hands an error of the source stream on as a result of that error.
        if (value?.errors?.some(isInterrupted)) {
          clearInterval(ping);
          gone.removeEventListener('abort', leave);
          await iterator.return?.();
          return closeQuietly(controller);
        }
        if (value != null) controller.enqueue(encoder.encode(nextEvent(value)));
        if (done) {
          controller.enqueue(encoder.encode('event: complete\ndata:\n\n'));
          clearInterval(ping);
          gone.removeEventListener('abort', leave);
          controller.close();
        }
      } catch (error) {
        clearInterval(ping);
        gone.removeEventListener('abort', leave);
        if (left) return closeQuietly(controller);
        // Shutting down: end the response as a dropped connection would, so clients reconnect.
        if (isInterrupted(error)) controller.close();
        else controller.error(error);
      }
    },
    async cancel() {
      await leave();
    },
  });
  return new fetchAPI.Response(body, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream',
      connection: 'keep-alive',
      'cache-control': 'no-cache',
      'content-encoding': 'none',
    },
  });
}

/** A subscription's response that ends before its first event, as a dropped connection would. */
function interrupted(fetchAPI: FetchAPI): Response {
  return new fetchAPI.Response(':\n\n', { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

/** Closes a response the client may have cancelled already. */
function closeQuietly(controller: ReadableStreamDefaultController<Uint8Array>): void {
  try {
    controller.close();
  } catch {
    // Cancelled: nothing to close.
  }
}

/** One `next` event: its id when it has one, and the result as Yoga writes it (no `http` internals). */
function nextEvent(result: ExecutionResult): string {
  const eventId = result.extensions?.eventId;
  const id = typeof eventId === 'string' ? `id: ${eventId}\n` : '';
  return `${id}event: next\ndata: ${JSON.stringify(withoutInternals(result))}\n\n`;
}

function withoutInternals(result: ExecutionResult): unknown {
  if (!result.errors?.length && !result.extensions?.http) return result;
  const { http: _http, ...extensions } = result.extensions ?? {};
  return {
    ...result,
    ...(result.errors && { errors: result.errors.map(errorWithoutInternals) }),
    extensions: Object.keys(extensions).length > 0 ? extensions : undefined,
  };
}

function errorWithoutInternals(error: GraphQLError): unknown {
  const json = typeof error.toJSON === 'function' ? error.toJSON() : { ...error };
  if (!json.extensions) return json;
  const { http: _http, unexpected: _unexpected, ...extensions } = json.extensions;
  const { extensions: _all, ...rest } = json;
  return Object.keys(extensions).length > 0 ? { ...rest, extensions } : rest;
}

/** Whether the stream stopped for a shutdown, however the executor wrapped what it threw. */
function isInterrupted(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 4; depth++) {
    if (cause instanceof StreamInterrupted) return true;
    cause = (cause as { originalError?: unknown }).originalError ?? cause.cause;
  }
  return false;
}
