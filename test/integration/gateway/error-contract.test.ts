import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../../src/errors/error-codes.ts';
import { connectRedis } from '../../../src/redis/connection.ts';
import { RedisIdempotencyStore } from '../../../src/withdrawals/redis-idempotency-store.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { type RunningRedis, startRedis } from '../../support/redis.ts';
import { withdrawalInput } from '../../support/sandbox.ts';

/**
 * One error contract: every row of the error table in docs/errors.md has a path that produces it
 * here, and every error any of these paths answers carries an `extensions.code`. A row of that table
 * without a path here, or a path here whose code the table does not list, fails the first test.
 */

let gw: TestGateway;
let budgeted: TestGateway;
let key: string;
let readOnlyKey: string;
let walletId: string;
let budgetedKey: string;
let redis: RunningRedis;
let fleet: TestGateway;
let fleetKey: string;
let fleetWalletId: string;
let trustedOnly: TestGateway;
let noSubscriptions: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    upstream: {
      // Far above any answer of a busy machine: one late answer would open its route's circuit.
      headersTimeoutMs: 1_500,
      maxRetryAfterMs: 0,
      circuitBreaker: { failures: 1, halfOpenAfterMs: 60_000 },
    },
  });
  budgeted = await startTestGateway({ config: { maxUpstreamCallsPerRequest: 1 } });
  noSubscriptions = await startTestGateway({ config: { subscriptions: { perKey: 0 } } });
  trustedOnly = await startTestGateway({
    config: { trustedDocuments: { mode: 'enforce', manifest: new Map() } },
  });
  const merchant = await gw.sandbox.world.merchant();
  key = merchant.key;
  readOnlyKey = merchant.readOnlyKey;
  walletId = (await gw.sandbox.world.wallet(merchant.id)).id;
  const other = await budgeted.sandbox.world.merchant();
  await budgeted.sandbox.world.wallet(other.id);
  budgetedKey = other.key;
  // A gateway of a fleet whose Redis has gone away.
  redis = await startRedis();
  const connection = await connectRedis(redis.url, pino({ level: 'silent' }));
  fleet = await startTestGateway({
    infrastructure: { idempotencyStore: new RedisIdempotencyStore(connection, { maxKeysPerCaller: 1000 }) },
  });
  const third = await fleet.sandbox.world.merchant();
  fleetKey = third.key;
  fleetWalletId = (await fleet.sandbox.world.wallet(third.id)).id;
  await redis.stop();
  connection.disconnect();
});
afterAll(async () => {
  await gw.close();
  await budgeted.close();
  await trustedOnly.close();
  await noSubscriptions.close();
  await fleet.close();
  await redis.close();
});
beforeEach(async () => {
  await gw.sandbox.admin('DELETE', '/faults');
});

interface Answer {
  status: number;
  errors: { message: string; extensions?: { code?: string } }[];
}

async function raw(url: string, init: RequestInit, on = gw): Promise<Answer> {
  const response = await on.gateway.fetch(`http://gateway.test${url}`, init);
  const text = await response.text();
  const body = text ? JSON.parse(text) : {};
  return { status: response.status, errors: body.errors ?? [] };
}

const post = (body: string, headers: Record<string, string> = {}, on = gw, withKey = key) =>
  raw(
    '/graphql',
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${withKey}`, ...headers },
      body,
    },
    on,
  );
const query = (text: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  post(JSON.stringify({ query: text, variables }), headers);
const fault = (body: Record<string, unknown>) => gw.sandbox.admin('POST', '/faults', body);
const CREATE = `mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename } }`;
const withdrawal = () => withdrawalInput(walletId);

/** One path per code of docs/errors.md's table, each answering at least one error with that code. */
const PATHS: Record<string, () => Promise<Answer>> = {
  UNAUTHENTICATED: () =>
    raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ wallets { totalCount } }' }),
    }),
  FORBIDDEN: () =>
    post(JSON.stringify({ query: CREATE, variables: { input: withdrawal() } }), {}, gw, readOnlyKey),
  BAD_USER_INPUT: () => query('query($n: Int!) { wallets(first: $n) { totalCount } }'),
  RATE_LIMITED: async () => {
    await fault({
      method: 'GET',
      path: '/external/v1/wallets?',
      status: 429,
      headers: { 'retry-after': '5' },
    });
    return query('{ wallets { totalCount } }');
  },
  UPSTREAM_TIMEOUT: async () => {
    await fault({ method: 'GET', path: '/external/v1/deposits?', hang: true });
    return query('{ deposits(first: 3) { totalCount } }');
  },
  UPSTREAM_UNAVAILABLE: async () => {
    await fault({ method: 'GET', path: '/external/v1/withdrawal-intents?', status: 503 });
    return query('{ withdrawalIntents(first: 3) { totalCount } }');
  },
  UPSTREAM_ERROR: async () => {
    await fault({ method: 'GET', path: '/external/v1/wallets?', status: 500 });
    return query('{ wallets(first: 4) { totalCount } }');
  },
  OUTCOME_UNKNOWN: async () => {
    await fault({ method: 'POST', path: '/external/v1/withdrawal-intents', status: 502, times: 1 });
    return query(CREATE, { input: withdrawal() });
  },
  IDEMPOTENCY_UNAVAILABLE: () =>
    post(
      JSON.stringify({
        query: CREATE,
        variables: { input: { ...withdrawal(), walletId: fleetWalletId, idempotencyKey: 'k' } },
      }),
      {},
      fleet,
      fleetKey,
    ),
  PERSISTED_DOCUMENT_REQUIRED: () => post(JSON.stringify({ query: '{ __typename }' }), {}, trustedOnly),
  NOT_FOUND: async () => {
    // A subscription to an intent this merchant does not have: the stream's one event, then its end.
    const response = await gw.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${key}`,
      },
      body: JSON.stringify({
        query: 'subscription ($id: ID!) { withdrawalIntentUpdated(id: $id) { id } }',
        variables: { id: '00000000-0000-4000-8000-000000000000' },
      }),
      signal: AbortSignal.timeout(10_000),
    });
    const events = (await response.text())
      .split('\n')
      .filter((line) => line.startsWith('data: ') && line.length > 6)
      .map((line) => JSON.parse(line.slice(6)) as { errors?: Answer['errors'] });
    return { status: response.status, errors: events.flatMap((event) => event.errors ?? []) };
  },
  PERSISTED_QUERY_NOT_FOUND: () =>
    post(JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } })),
  EVENT_ID_NOT_RESUMABLE: () =>
    // An event id no subscription sent to this key.
    post(JSON.stringify({ query: 'subscription { withdrawalIntentsUpdated(after: "AQAB") { id } }' }), {
      accept: 'application/graphql-response+json',
    }),
  SUBSCRIPTION_LIMIT_EXCEEDED: () =>
    post(
      JSON.stringify({ query: 'subscription { withdrawalIntentsUpdated { id } }' }),
      { accept: 'application/graphql-response+json' },
      noSubscriptions,
    ),
  API_KEY_IN_URL: () =>
    raw('/graphql?access_token=abc', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    }),
  QUERY_LIMIT_EXCEEDED: () =>
    post(
      JSON.stringify({
        query: '{ a: wallets(first: 1) { totalCount } b: deposits(first: 1) { totalCount } }',
      }),
      {},
      budgeted,
      budgetedKey,
    ),
  REQUEST_TOO_LARGE: () => query(`{ wallets { totalCount } } # ${'x'.repeat(200_000)}`),
  CSRF_HEADER_REQUIRED: () => raw('/graphql?query=%7B__typename%7D', { headers: {} }),
  NOT_ACCEPTABLE: () =>
    query('{ wallets { totalCount ... @defer { nodes { id } } } }', {}, { accept: 'application/json' }),
  UNSUPPORTED_MEDIA_TYPE: () => post('<query/>', { 'content-type': 'application/xml' }),
  BAD_REQUEST: () => post('{"query": "{ wallets'),
  GRAPHQL_PARSE_FAILED: () => query('{ wallets('),
  GRAPHQL_VALIDATION_FAILED: () => query('{ nope }'),
  INTERNAL_SERVER_ERROR: async () => {
    // A wallet the REST API sends without its networkEndpoint: the address field cannot be read.
    const broken = {
      id: 'w-1',
      status: 'active',
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      assets: [],
    };
    const paging = { size: 1, page: 1, count: 1, limit: 1, totalCount: 1, totalPages: 1 };
    await fault({
      method: 'GET',
      path: '/external/v1/wallets?',
      status: 200,
      body: JSON.stringify({ code: 'ok', message: 'OK', paging, data: [broken] }),
    });
    return query('{ wallets(first: 1) { nodes { address } } }');
  },
};

/** The docs/errors.md table's rows: code → its HTTP status column. */
function documentedRows(): Map<string, string> {
  const page = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
  const table = page.slice(page.indexOf('| `extensions.code` |'));
  const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
  return new Map(
    rows.map((row) => {
      const [code, , status] = row.slice(1, -1).split(' | ');
      return [/^ ?`([A-Z_]+)`$/.exec(code ?? '')?.[1] ?? `unparsed row: ${row}`, status ?? ''];
    }),
  );
}

function documentedCodes(): string[] {
  return [...documentedRows().keys()];
}

describe('the error contract', () => {
  it('has a path here for every code of the docs/errors.md table, and no code the table lacks', () => {
    expect(Object.keys(PATHS).sort()).toEqual(documentedCodes().sort());
  });

  it("the docs/errors.md table is ERROR_CODES, the gateway's own table: the same codes, each with its status", () => {
    const rows = documentedRows();
    expect([...rows.keys()].sort()).toEqual(Object.keys(ERROR_CODES).sort());
    for (const [code, row] of Object.entries(ERROR_CODES)) {
      expect(rows.get(code), code).toMatch(new RegExp(`^${row.status}\\b`));
    }
  });

  it.each(Object.keys(PATHS))('%s: the path answers it, and every error has a code', async (code) => {
    const answer = await (PATHS[code] as () => Promise<Answer>)();
    expect(answer.errors.length).toBeGreaterThan(0);
    expect(answer.errors.map((e) => e.extensions?.code)).toContain(code);
    for (const error of answer.errors)
      expect(error.extensions?.code, error.message).toEqual(expect.any(String));
  });

  /**
   * The executor's own errors carried no code (it raises them as GraphQLErrors, which Yoga does not
   * mask): an argument made null at run time, on a field or at the root, and a resolver's value the
   * executor cannot place (here an abstract type with no type: the same node asked twice did that).
   */
  it.each([
    [
      'a null @skip condition on a field',
      'query($v: Boolean = false) { wallets(first: 1) { nodes { restId @skip(if: $v) } } }',
      { v: null },
    ],
    [
      'a null @include condition at the root',
      'query($v: Boolean = true) { __typename @include(if: $v) }',
      { v: null },
    ],
    [
      'a null for a non-null argument with a default',
      'query($id: ID = "x") { wallet(id: $id) { id } }',
      { id: null },
    ],
  ])("the executor's own errors carry a code: %s", async (_what, text, variables) => {
    const answer = await query(text, variables);
    expect(answer.errors).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/^Argument "\w+" of non-null type "\w+!" must not be null\.$/),
        extensions: { code: 'BAD_USER_INPUT' },
      }),
    ]);
  });

  it('an answer whose data is null lists the errors that nulled it, whatever failed beside them', async () => {
    const deposit = await gw.sandbox.world.deposit(walletId, { amount: '1.50' });
    await fault({ method: 'GET', path: '/external/v1/deposits', status: 500 });
    const globalId = Buffer.from(`Deposit:${deposit.id}`).toString('base64');
    const answer = await query(
      'query($ids: [ID!]!) { deposits(first: 1) { totalCount } nodes(ids: $ids) { id } list: deposits(first: 2) { totalCount } }',
      { ids: [globalId] },
    );
    expect(answer.errors).toEqual([
      expect.objectContaining({
        path: ['nodes'],
        extensions: expect.objectContaining({ code: 'UPSTREAM_ERROR' }),
      }),
    ]);
  });

  it('never echoes a value the client sent, in any environment', async () => {
    const secret = 'a-secret-that-must-not-come-back';
    const answers = [
      await post(`{"query": "${secret}`),
      await post(`{"query": "${secret}"}`, { accept: 'application/graphql-response+json' }),
      await post(`{"query": "{ wallets { totalCount } }", "extensions": "${secret}"}`),
    ];
    for (const answer of answers) expect(JSON.stringify(answer)).not.toContain(secret);
    expect(answers[0]?.status).toBe(400);
  });
});
