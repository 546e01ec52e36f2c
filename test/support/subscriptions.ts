import { EventSourceParserStream } from 'eventsource-parser/stream';
import { expect } from 'vitest';
import type { GatewayMetrics } from '../../src/observability/metrics.ts';
import type { Gateway } from '../../src/yoga.ts';
import { parseMetrics, sampleSum } from './metrics.ts';
import { recordSuiteKey } from './suite-logs.ts';

// biome-ignore lint/suspicious/noExplicitAny: results are asserted structurally
export type Result = { data?: any; errors?: any[]; extensions?: Record<string, unknown> };

export interface ResultStream {
  status: number;
  /** The event id of the last result (its `id:` line, checked equal to its `extensions.eventId`). */
  lastEventId(): string | undefined;
  /** The next result; undefined once the stream completed. */
  next(): Promise<Result | undefined>;
  /** Every result until the stream completes. */
  rest(): Promise<Result[]>;
  /** Leaves, as a client closing the connection. */
  close(): void;
}

/** A subscription over GraphQL over SSE through `gateway.fetch`, as a client reads it. */
export async function subscribeSSE(
  gateway: Gateway,
  query: string,
  variables: Record<string, unknown>,
  key: string | null,
): Promise<ResultStream> {
  const aborted = new AbortController();
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
  if (key) {
    recordSuiteKey(key);
    headers.authorization = `Bearer ${key}`;
  }
  const response = await gateway.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers,
    body: JSON.stringify({ query, variables }),
    signal: aborted.signal,
  });
  let next: () => Promise<Result | undefined>;
  let lastEventId: string | undefined;
  /** Results are asserted whole elsewhere: the event id is kept here, once checked. */
  const withoutEventId = (result: Result, id: string | undefined): Result => {
    const { eventId, ...extensions } = (result.extensions ?? {}) as Record<string, unknown>;
    expect(id).toBe(eventId);
    if (typeof eventId === 'string') lastEventId = eventId;
    const { extensions: _all, ...rest } = result;
    return Object.keys(extensions).length > 0 ? { ...rest, extensions } : rest;
  };
  let cancel = () => {};
  if (response.headers.get('content-type')?.startsWith('text/event-stream') && response.body) {
    const reader = response.body
      .pipeThrough(new TextDecoderStream())
      .pipeThrough(new EventSourceParserStream())
      .getReader();
    cancel = () => void reader.cancel().catch(() => {});
    next = async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || value.event === 'complete') return undefined;
        if (value.event === 'next') return withoutEventId(JSON.parse(value.data) as Result, value.id);
      }
    };
  } else {
    let body: Result | undefined = (await response.json()) as Result;
    next = async () => {
      const result = body;
      body = undefined;
      return result;
    };
  }
  return {
    status: response.status,
    lastEventId: () => lastEventId,
    next,
    async rest() {
      const results: Result[] = [];
      for (let result = await next(); result; result = await next()) results.push(result);
      return results;
    },
    close: () => {
      cancel();
      aborted.abort();
    },
  };
}

/**
 * Resolves once `metrics` has counted one more poll of `feed` than when called. A poll runs only
 * once its poller has its first state, so a change made afterwards is news to every subscriber
 * that was in by then.
 */
export async function nextPoll(metrics: Pick<GatewayMetrics, 'scrape'>, feed: string): Promise<void> {
  const polls = async () =>
    sampleSum(parseMetrics((await metrics.scrape()).body), 'gateway_subscription_polls_total', { feed });
  const before = await polls();
  await expect.poll(polls).toBeGreaterThan(before);
}
