import type { ExecutionResult, GraphQLError } from 'graphql';
import { type FetchAPI, isAsyncIterable, type Plugin } from 'graphql-yoga';
import { eventIdOf, StreamInterrupted } from '../subscriptions/feed.ts';

/** A comment this often keeps proxies from closing a quiet stream (Yoga's own interval). */
const PING_MS = 12_000;

/**
 * Subscriptions over SSE (the WebSocket bridge reads the same stream), in place of Yoga's writer:
 * what Yoga writes (a first comment, a comment every PING_MS, `event: next` per result without
 * internal extensions, `event: complete`), plus each event's id as an `id:` line and
 * `extensions.eventId`; a stream interrupted by a shutdown ends without `event: complete`, so
 * clients reconnect and resume (docs/subscriptions.md#reconnecting-and-resuming).
 */
export function useResumableStreams(): Plugin {
  const subscriptions = new WeakSet<Request>();
  return {
    onSubscribe({ args }) {
      const context = args.contextValue as { request?: Request };
      if (context.request) subscriptions.add(context.request);
      return {
        onSubscribeResult: () => ({
          onNext({ result, setResult }) {
            const eventId = eventIdOf(context);
            if (eventId) setResult({ ...result, extensions: { ...result.extensions, eventId } });
          },
        }),
      };
    },
    onResultProcess({ request, result, resultProcessor, setResultProcessor }) {
      // Yoga chose first: for a subscription's stream, only its SSE writer.
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

/** One subscription's response; the subscription ends when the client cancels or the request aborts. */
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
