import type { IncomingMessage } from 'node:http';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { type ExecutionResult, parse } from 'graphql';
import type { SubscribePayload } from 'graphql-ws';
import type { Extra } from 'graphql-ws/use/ws';
import { isBearer } from '../context.ts';
import type { Gateway } from '../yoga.ts';

/** The document graphql-ws is given for every operation: the operation itself runs in `bridge`. */
export const BRIDGED = parse('subscription Bridged { __typename }');

/** What an operation of a socket carries into the bridge (graphql-ws's contextValue). */
export interface Bridged {
  payload: SubscribePayload;
  headers: Headers;
  /** The operation's socket: closed with SERVICE_RESTART when the gateway interrupts a stream. */
  socket: Extra['socket'];
}

/** Closes a socket whose stream shutdown interrupted: graphql-ws clients reconnect and re-subscribe. */
export const SERVICE_RESTART = 1012;
export const RESTART_REASON = 'Service restart: reconnect and resume';

/** The headers an operation of this socket is sent with: its key, and who the client says it is. */
export function headersOf(
  request: IncomingMessage,
  params: Readonly<Record<string, unknown>> | undefined,
): Headers {
  const headers = new Headers({ 'content-type': 'application/json', accept: 'text/event-stream' });
  const authorization = authorizationOf(request, params);
  for (const [name, value] of [
    ['authorization', authorization],
    ['user-agent', request.headers['user-agent']],
    ['x-request-id', request.headers['x-request-id']],
    ['graphql-client-name', request.headers['graphql-client-name']],
    ['graphql-client-version', request.headers['graphql-client-version']],
  ] as const) {
    if (typeof value !== 'string') continue;
    try {
      headers.set(name, value);
    } catch {
      // Not a valid header value: sent without it, the operation fails as it would over HTTP.
    }
  }
  return headers;
}

/**
 * The socket's well-formed `Bearer <key>`, from the connection_init payload or else the upgrade
 * request's header (the rule of HTTP requests, context.ts); null when neither has one.
 */
export function authorizationOf(
  request: IncomingMessage,
  params: Readonly<Record<string, unknown>> | undefined,
): string | null {
  const value = params?.Authorization ?? params?.authorization ?? request.headers.authorization;
  return typeof value === 'string' && isBearer(value) ? value : null;
}

/**
 * One operation through the HTTP pipeline, its results as an async iterator. Returning it aborts the
 * request at once, even while it waits for an event. A stream that ends without `complete` was
 * interrupted by shutdown (plugins/resumable-streams.ts): the socket closes with SERVICE_RESTART and
 * the operation is never completed, so the client reconnects.
 */
export function bridge(
  gateway: Gateway,
  { payload, headers, socket }: Bridged,
  path: string,
): AsyncIterableIterator<ExecutionResult> {
  const aborted = new AbortController();
  async function* results(): AsyncGenerator<ExecutionResult> {
    const response = await gateway.fetch(`http://gateway.ws${path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ ...payload, ...(payload.query === '' && { query: undefined }) }),
      signal: aborted.signal,
    });
    if (!response.headers.get('content-type')?.startsWith('text/event-stream') || !response.body) {
      // Refused before it ran (401, 413, 429, trusted documents...): one result, as the POST got.
      yield (await response.json()) as ExecutionResult;
      return;
    }
    const events = response.body
      .pipeThrough(new TextDecoderStream())
      .pipeThrough(new EventSourceParserStream())
      .getReader();
    // Cancelling the reader cancels the response body, which ends the gateway's execution.
    cancel = () => void events.cancel().catch(() => {});
    if (aborted.signal.aborted) cancel();
    for (;;) {
      const { done, value: event } = await events.read();
      if (event?.event === 'complete') return;
      if (done) {
        if (aborted.signal.aborted) return;
        socket.close(SERVICE_RESTART, RESTART_REASON);
        // Never completes: graphql-ws returns this iterator once the socket has closed.
        await new Promise((resolve) => aborted.signal.addEventListener('abort', resolve, { once: true }));
        return;
      }
      if (event.event === 'next' && event.data) yield JSON.parse(event.data) as ExecutionResult;
    }
  }
  let cancel = () => {};
  const generator = results();
  const stop = () => {
    aborted.abort();
    cancel();
  };
  const iterator: AsyncIterableIterator<ExecutionResult> = {
    [Symbol.asyncIterator]: () => iterator,
    next: () =>
      generator.next().catch((error: unknown) => {
        if (aborted.signal.aborted) return { done: true, value: undefined };
        throw error;
      }),
    return: async () => {
      stop();
      await generator.return(undefined).catch(() => {});
      return { done: true, value: undefined };
    },
    throw: async (error?: unknown) => {
      stop();
      return generator.throw(error);
    },
  };
  return iterator;
}
