/**
 * The Relay example's network layer: relay-runtime's `Network` over `fetch`, for queries, the
 * mutation and subscriptions alike: one POST each, answered as JSON, as `multipart/mixed` (@defer),
 * or as `text/event-stream` for a subscription (GraphQL over SSE, "distinct connections" mode).
 * examples/relay/wallet-client.ts builds its Environment on it; docs/clients.md shows this file whole.
 *
 * Three things a Relay network layer must do with this gateway (each held by
 * test/integration/gateway/relay-example.test.ts):
 * - split each `incremental` payload (@defer, @stream) into one payload per part, with its `path`,
 *   `label` and `hasNext`: relay-runtime 21 reads the older format, one part per payload, and
 *   fails a payload without `data` ("No data returned for operation");
 * - keep partial results: `data` with `errors` is a payload (Relay puts each error on its field,
 *   where `@catch` reads it); only an answer without data is thrown;
 * - with `documentIds`, send relay-compiler's persisted-query id as `documentId` and no text, for a
 *   gateway running relay-compiler's `persisted-queries.json` as its manifest (`enforce`).
 */

import { EventSourceParserStream } from 'eventsource-parser/stream';
import {
  type GraphQLResponse,
  Network,
  Observable,
  type PayloadError,
  type RequestParameters,
  type Variables,
} from 'relay-runtime';

export interface NetworkOptions {
  /** The gateway's origin, e.g. http://localhost:4000. */
  gatewayURL: string;
  apiKey: string;
  /** Send each operation by its persisted-query id alone (the gateway has the manifest). */
  documentIds?: boolean;
}

/** One GraphQL result as the gateway sends it: a whole answer, or a part of a streamed one. */
interface Result {
  data?: Record<string, unknown> | null;
  errors?: PayloadError[];
  extensions?: Record<string, unknown>;
  hasNext?: boolean;
  incremental?: {
    data?: Record<string, unknown> | null;
    items?: unknown[];
    path: (string | number)[];
    label?: string;
    errors?: PayloadError[];
    extensions?: Record<string, unknown>;
  }[];
}

export function createNetwork({ gatewayURL, apiKey, documentIds = false }: NetworkOptions) {
  const execute = (params: RequestParameters, variables: Variables) =>
    Observable.create<GraphQLResponse>((sink) => {
      const controller = new AbortController();
      (async () => {
        if (documentIds && !params.id) throw new Error(`${params.name} has no persisted-query id.`);
        const response = await fetch(`${gatewayURL}/graphql`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${apiKey}`,
            'content-type': 'application/json',
            // The gateway streams a subscription over SSE (or WebSocket) only; @defer over
            // multipart/mixed (or SSE); everything else is JSON.
            accept:
              params.operationKind === 'subscription'
                ? 'text/event-stream'
                : 'multipart/mixed, application/graphql-response+json, application/json',
          },
          body: JSON.stringify(
            documentIds
              ? { documentId: params.id, variables }
              : { query: params.text, operationName: params.name, variables },
          ),
          signal: controller.signal,
        });
        for await (const result of resultsOf(response)) {
          for (const payload of toRelayPayloads(result, params.name)) sink.next(payload);
        }
        sink.complete();
      })().catch((error: unknown) => {
        if (!controller.signal.aborted) sink.error(error as Error);
      });
      // Relay unsubscribes when the query is disposed or the subscription stopped.
      return () => controller.abort();
    });
  return Network.create(execute, execute);
}

/**
 * The payloads relay-runtime reads for one result: the result itself, or one payload per
 * incremental part (`{ data, path, label, hasNext }`, a @stream's items one by one).
 */
export function toRelayPayloads(result: Result, name: string): GraphQLResponse[] {
  if (result.incremental) {
    const payloads: GraphQLResponse[] = [];
    for (const part of result.incremental) {
      const common = { label: part.label, errors: part.errors, extensions: part.extensions };
      if (part.items) {
        const [index, ...parent] = [...part.path].reverse() as [number, ...(string | number)[]];
        part.items.forEach((item, offset) => {
          const path = [...parent.reverse(), index + offset];
          payloads.push({ ...common, data: item as Record<string, unknown>, path } as GraphQLResponse);
        });
      } else if (part.data) {
        payloads.push({ ...common, data: part.data, path: part.path } as GraphQLResponse);
      }
    }
    // Relay reads `hasNext` of a payload: only the last part of the last result says false.
    payloads.forEach((payload, index) => {
      (payload as { hasNext?: boolean }).hasNext = index < payloads.length - 1 || result.hasNext === true;
    });
    return payloads;
  }
  // The closing `{ hasNext: false }` of a stream carries nothing to read.
  if (result.data === undefined && !result.errors) return [];
  // A partial result is data: Relay keeps every field the gateway answered.
  if (result.data != null) return [result as GraphQLResponse];
  const messages = (result.errors ?? []).map(
    (error) => `${error.message}${codeOf(error) ? ` (${codeOf(error)})` : ''}`,
  );
  throw Object.assign(new Error(`${name} failed: ${messages.join('; ') || 'no data'}`), {
    errors: result.errors,
  });
}

const codeOf = (error: PayloadError) =>
  (error as { extensions?: { code?: string } }).extensions?.code ?? null;

/** The results of an answer: one for JSON, one per part for `multipart/mixed`, one per SSE `next`. */
async function* resultsOf(response: Response): AsyncGenerator<Result> {
  const type = response.headers.get('content-type') ?? '';
  if (/^text\/event-stream\b/i.test(type) && response.body) {
    const events = response.body
      .pipeThrough(new TextDecoderStream())
      .pipeThrough(new EventSourceParserStream());
    for await (const event of events as unknown as AsyncIterable<{ event?: string; data: string }>) {
      if (event.event === 'complete') return;
      if (event.event === 'next') yield JSON.parse(event.data) as Result;
    }
    return;
  }
  const boundary = /^multipart\/mixed\b.*?boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (!boundary || !response.body) {
    const text = await response.text();
    try {
      yield JSON.parse(text) as Result;
    } catch {
      throw new Error(`HTTP ${response.status} from the gateway: ${text.slice(0, 200)}`);
    }
    return;
  }
  // A part is its headers, a blank line and one JSON document, after a CRLF and `--boundary`
  // (JSON has no raw line break, so the delimiter cannot occur inside one).
  const delimiter = `\r\n--${boundary}`;
  const decoder = new TextDecoder();
  let buffer = '\r\n';
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let start = buffer.indexOf(delimiter);
    let end = start < 0 ? -1 : buffer.indexOf(delimiter, start + delimiter.length);
    while (end >= 0) {
      const part = buffer.slice(start + delimiter.length, end);
      const body = part.slice(part.indexOf('\r\n\r\n') + 4).trim();
      if (part.includes('\r\n\r\n') && body) yield JSON.parse(body) as Result;
      buffer = buffer.slice(end);
      start = 0;
      end = buffer.indexOf(delimiter, delimiter.length);
    }
  }
}
