import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPILE_AFTER_USES } from '../../../src/plugins/compiled-execution.ts';
import { SandboxStore } from '../../../src/sandbox/store/store.ts';
import type { RunningServer } from '../../../src/server.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { recordSuiteKey } from '../../support/suite-logs.ts';

/**
 * The hot path (src/execution/hot-path.ts) must answer exactly what Yoga's pipeline answers, and hand Yoga
 * every request it does not answer as a plain success. Two gateways over one sandbox world, over
 * real sockets, one with the hot path and one without (HOT_PATH=false), get the same requests:
 * the example queries, the benchmark's screens, and requests that fail, are refused or carry what
 * the hot path does not serve. Statuses, bodies and the headers a client reads must be equal, and
 * the hot path's counter must show which requests it answered.
 */
let hot: TestGateway;
let pipeline: TestGateway;
const urls = new Map<TestGateway, string>();
const servers: RunningServer[] = [];
let key: string;
let walletId: string;

const operations = new URL('../../../schema/operations/', import.meta.url);
const operation = (file: string) => readFileSync(new URL(file, operations), 'utf8');

beforeAll(async () => {
  const store = new SandboxStore();
  // A small rate limit shows whether a request is counted once or twice.
  const config = { rateLimitPerKey: { points: 1_000, durationSeconds: 60 } };
  hot = await startTestGateway({ store, config, upstream: { cacheTtlMs: 1_000 } });
  pipeline = await startTestGateway({
    store,
    config: { ...config, hotPath: false },
    upstream: { cacheTtlMs: 1_000 },
  });
  for (const gateway of [hot, pipeline]) {
    const running = await gateway.runtime.listen({ port: 0, host: '127.0.0.1' });
    servers.push(running);
    urls.set(gateway, running.url);
  }
  const merchant = await hot.sandbox.world.merchant();
  key = merchant.key;
  recordSuiteKey(key);
  const wallet = await hot.sandbox.world.wallet(merchant.id);
  walletId = wallet.id;
  for (let n = 0; n < 5; n++) await hot.sandbox.world.deposit(wallet.id, { amount: `${n + 1}.5` });
}, 60_000);
afterAll(async () => {
  for (const server of servers) await server.close(1_000);
  await hot?.close();
  await pipeline?.close();
});

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | null>;
}

/** What a client reads of an answer: status, body (decompressed) and the headers that mean something. */
async function ask(
  gateway: TestGateway,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(`${urls.get(gateway)}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  const named = (name: string) => response.headers.get(name);
  return {
    status: response.status,
    // fetch decompresses: the coding is in the header, the text is what it decoded.
    body: bytes.toString(),
    headers: {
      'content-type': named('content-type'),
      'content-encoding': named('content-encoding'),
      vary: named('vary'),
      'retry-after': named('retry-after'),
    },
  };
}

async function hotPathCount(outcome: 'served' | 'handed_over'): Promise<number> {
  const counted = await hot.metrics.registry.getSingleMetric('gateway_hot_path_total')?.get();
  return counted?.values.find((sample) => sample.labels.outcome === outcome)?.value ?? 0;
}

/** Both gateways' answers to `body`, once each has run it past compiling (the hot path serves compiled queries). */
async function both(body: unknown, headers: Record<string, string> = {}) {
  for (let use = 0; use <= COMPILE_AFTER_USES; use++) {
    await ask(hot, body, headers);
    await ask(pipeline, body, headers);
  }
  const served = await hotPathCount('served');
  const handedOver = await hotPathCount('handed_over');
  const answers = { hot: await ask(hot, body, headers), pipeline: await ask(pipeline, body, headers) };
  return {
    ...answers,
    served: (await hotPathCount('served')) - served,
    handedOver: (await hotPathCount('handed_over')) - handedOver,
  };
}

describe('the hot path answers as the pipeline does', () => {
  const queries = readdirSync(operations).filter(
    (file) => file.endsWith('.graphql') && !/^(live|watch)-|deferred|create-withdrawal|node\./.test(file),
  );

  it.each(queries)('schema/operations/%s, served by the hot path', async (file) => {
    const answers = await both({ query: operation(file), variables: { id: walletId } });
    expect(answers.hot).toEqual(answers.pipeline);
    expect(JSON.parse(answers.hot.body).errors).toBeUndefined();
    expect(answers.served).toBe(1);
  });

  it('the benchmark screens, with both media types, compressed and not', async () => {
    const screens = [
      '{ wallets(first: 20) { nodes { id address assets { currencyCode balance { availableAmount lockedAmount } } } } }',
      '{ deposits(first: 50) { nodes { id amount status createdAt wallet { address } } } }',
    ];
    for (const query of screens) {
      const variants: Record<string, string>[] = [
        {},
        { accept: 'application/graphql-response+json' },
        { 'accept-encoding': 'gzip' },
        { 'accept-encoding': 'br;q=1, gzip;q=0.5' },
      ];
      for (const headers of variants) {
        const answers = await both({ query }, headers);
        expect(answers.hot, `${query} ${JSON.stringify(headers)}`).toEqual(answers.pipeline);
        expect(answers.served).toBe(1);
      }
    }
    // The activity feed is over a KiB: compressed on both (fetch decodes it for the comparison above).
    const feed = await both({ query: screens[1] }, { 'accept-encoding': 'gzip' });
    expect(feed.hot.headers['content-encoding']).toBe('gzip');
    expect(feed.served).toBe(1);
  });

  it('hands over a result with errors, answered as the pipeline answers it', async () => {
    const query = 'query W($id: ID!) { wallet(id: $id) { address deposits(first: 2) { nodes { id } } } }';
    const withErrors: string[] = [];
    // A wallet that does not exist is null without an error (served); the others fail (handed over).
    for (const id of ['00000000-0000-4000-8000-000000000000', 'V2FsbGV0Og==', 'RGVwb3NpdDp4', ' x']) {
      const answers = await both({ query, variables: { id } });
      expect(answers.hot, id).toEqual(answers.pipeline);
      const failed = JSON.parse(answers.hot.body).errors !== undefined;
      if (failed) withErrors.push(id);
      expect(answers.served, id).toBe(failed ? 0 : 1);
      expect(answers.handedOver, id).toBe(failed ? 1 : 0);
    }
    expect(withErrors.length).toBeGreaterThanOrEqual(2);
    // A REST API that fails the deposit list: a partial result, handed over.
    for (const gateway of [hot, pipeline])
      await gateway.sandbox.admin('POST', '/faults', {
        method: 'GET',
        path: '/external/v1/deposits',
        status: 500,
      });
    try {
      // Its own text, so that no cached answer of the requests above is read.
      const answers = await both({
        query: 'query F { wallets(first: 1) { nodes { id } } deposits(first: 4) { nodes { id } } }',
      });
      expect(answers.hot).toEqual(answers.pipeline);
      expect(JSON.parse(answers.hot.body).errors?.[0]?.extensions?.code).toBeDefined();
      expect(answers.handedOver).toBe(1);
    } finally {
      for (const gateway of [hot, pipeline]) await gateway.sandbox.admin('DELETE', '/faults');
    }
  });

  it('hands over what it does not serve: a cost over the limit, bad variables, other params, bad JSON', async () => {
    const query = 'query D($n: Int!) { deposits(first: $n) { nodes { id } } }';
    for (const body of [
      { query, variables: { n: 10 } },
      { query, variables: { n: 100_000 } },
      { query, variables: { n: 'ten' } },
      { query, variables: [1] },
      { query, variables: { n: 10 }, extensions: { persistedQuery: { version: 1, sha256Hash: 'x' } } },
      { query, variables: { n: 10 }, operationName: 'Other' },
      `{"query": ${JSON.stringify(query)}, "variables": {"n": 10}`,
    ]) {
      const answers = await both(body);
      expect(answers.hot, JSON.stringify(body)).toEqual(answers.pipeline);
    }
    // The valid one is served; the others are handed over.
    const served = await both({ query, variables: { n: 10 } });
    expect(served.served).toBe(1);
    // Within every input limit, but over the cost limit with these variables.
    const nested =
      'query N($n: Int!) { wallets(first: $n) { nodes { deposits(first: $n) { nodes { id } } withdrawalIntents(first: $n) { nodes { id } } } } }';
    await both({ query: nested, variables: { n: 1 } });
    const refused = await both({ query: nested, variables: { n: 100 } });
    expect(refused.hot).toEqual(refused.pipeline);
    expect(refused.hot.status).toBe(400);
    expect(JSON.parse(refused.hot.body).errors[0].extensions.code).toBe('QUERY_LIMIT_EXCEEDED');
    expect(refused.served).toBe(0);
    expect(refused.handedOver).toBe(1);
    // A default is costed as the executors run it: `$n: Int = 100` without variables is refused too.
    const defaulted = await both({ query: nested.replace('$n: Int!', '$n: Int = 100') });
    expect(defaulted.hot).toEqual(defaulted.pipeline);
    expect(defaulted.hot.status).toBe(400);
    expect(JSON.parse(defaulted.hot.body).errors[0].extensions.code).toBe('QUERY_LIMIT_EXCEEDED');
  });

  it('echoes the caller’s request id and logs the request once, with it', async () => {
    const query = '{ wallets(first: 3) { nodes { id } } }';
    await both({ query });
    const response = await fetch(`${urls.get(hot)}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${key}`,
        'x-request-id': 'hot-1',
      },
      body: JSON.stringify({ query }),
    });
    expect(response.headers.get('x-request-id')).toBe('hot-1');
    await response.text();
    const lines = hot.logs.filter(
      (line) => line.includes('"requestId":"hot-1"') && line.includes('"msg":"request"'),
    );
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      status: 200,
      outcome: 'success',
      operationType: 'query',
    });
    // An id it must not log is replaced, on the hot path as in the pipeline.
    const unsafe = await fetch(`${urls.get(hot)}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-request-id': 'a b' },
      body: JSON.stringify({ query }),
    });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('the rate limit counts a request once, on either path', () => {
  it('refuses past the limit as the pipeline does, with one point per request', async () => {
    const limited = await startTestGateway({
      config: { rateLimitPerKey: { points: 14, durationSeconds: 60 } },
      upstream: { cacheTtlMs: 1_000 },
    });
    const running = await limited.runtime.listen({ port: 0, host: '127.0.0.1' });
    try {
      const merchant = await limited.sandbox.world.merchant();
      recordSuiteKey(merchant.key);
      const statuses: number[] = [];
      for (let n = 0; n < 16; n++) {
        const response = await fetch(`${running.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${merchant.key}` },
          body: JSON.stringify({ query: '{ wallets(first: 1) { nodes { id } } }' }),
        });
        statuses.push(response.status);
        await response.text();
      }
      // 14 points: 14 answers (the last ones from the hot path), then 429s.
      expect(statuses).toEqual([...Array(14).fill(200), 429, 429]);
    } finally {
      await running.close(1_000);
      await limited.close();
    }
  });
});
