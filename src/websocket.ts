import type { IncomingMessage, Server } from 'node:http';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { type ExecutionResult, type FormattedExecutionResult, parse } from 'graphql';
import type { SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { schema } from './schema/index.ts';
import type { Gateway } from './yoga.ts';

/**
 * GraphQL over WebSocket (the graphql-ws protocol, `graphql-transport-ws`) at the gateway's
 * GraphQL path, for clients that want one socket for many subscriptions.
 *
 * Each operation a socket starts runs through the very same HTTP pipeline as a POST: the bridge
 * below hands it to `gateway.fetch` as a POST with `Accept: text/event-stream` and relays the SSE
 * answer as graphql-ws messages. So authentication, trusted documents, rate and query limits,
 * metrics, traces and the access log apply to a WebSocket operation exactly as to an HTTP one,
 * with no second list of rules to keep in step.
 *
 * The key: browsers cannot set headers on a WebSocket, so clients send it in the connection_init
 * payload as `{ "Authorization": "Bearer <API key>" }` (a header on the upgrade request works
 * too). It lives in this socket's memory only and goes, as the header, with each operation.
 */
export function serveGraphQLOverWebSocket(
  server: Server,
  gateway: Gateway,
  options: { path: string; maxPayload: number; logger: Logger },
): { close(): Promise<void> } {
  const wss = new WebSocketServer({ server, path: options.path, maxPayload: options.maxPayload });
  wss.on('error', (error) => options.logger.warn({ err: error.message }, 'websocket server error'));
  const disposable = useServer(
    {
      // Never send an unexpected error's message to the client.
      isProd: true,
      // graphql-ws only needs a document to choose between execute and subscribe; the operation
      // the client sent runs in the gateway (bridge), which parses and validates it itself.
      onSubscribe: (ctx, _id, payload) => ({
        schema,
        document: BRIDGED,
        contextValue: {
          payload,
          headers: headersOf(ctx.extra.request, ctx.connectionParams),
        } satisfies Bridged,
      }),
      subscribe: (args) => bridge(gateway, args.contextValue as Bridged, options.path),
      // The gateway's results are serialised already (errors formatted and masked): sent as they are.
      onNext: (_ctx, _id, _payload, _args, result) => result as FormattedExecutionResult,
    },
    wss,
  );
  return { close: () => Promise.resolve(disposable.dispose()) };
}

const BRIDGED = parse('subscription Bridged { __typename }');

interface Bridged {
  payload: SubscribePayload;
  headers: Headers;
}

/** The headers an operation of this socket is sent with: its key, and who the client says it is. */
function headersOf(request: IncomingMessage, params: Readonly<Record<string, unknown>> | undefined): Headers {
  const headers = new Headers({ 'content-type': 'application/json', accept: 'text/event-stream' });
  const authorization = params?.Authorization ?? params?.authorization ?? request.headers.authorization;
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
 * One operation through the HTTP pipeline, its results as an async iterator. Returning it (the
 * client completed, or the socket closed) aborts the request at once, which ends the gateway's
 * subscription, even while it waits for the next event.
 */
function bridge(
  gateway: Gateway,
  { payload, headers }: Bridged,
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
      if (done || event.event === 'complete') return;
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
