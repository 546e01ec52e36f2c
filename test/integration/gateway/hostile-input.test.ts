import { encodeGlobalID } from '@pothos/plugin-relay';
import {
  type GraphQLArgument,
  type GraphQLInputField,
  getNamedType,
  isInputObjectType,
  isObjectType,
  isSpecifiedDirective,
} from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { schema } from '../../../src/schema/index.ts';
import { INPUT_LIMITS } from '../../../src/schema/input-limits.ts';
import type { IdempotencyStore } from '../../../src/withdrawals/idempotency-store.ts';
import { MemoryIdempotencyStore } from '../../../src/withdrawals/memory-idempotency-store.ts';
import { DEFAULTS, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { withdrawalInput } from '../../support/sandbox.ts';

// Input an attacker sends (issue 24): every bad argument is a coded 4xx, never a 500; nothing the
// client sends overflows the stack; no answer repeats more than a prefix of what the client sent;
// over-long scalars are refused by length before any work; and the REST API's own words reach a
// client only for the spec's documented codes.

let gw: TestGateway;
let key: string;
let walletId: string;
/** Calls on the idempotency store of `gw`, by method (ping excluded). */
let storeCalls: string[];

/** A store that records every call: an input refused before any work writes nothing. */
function recordingStore(): IdempotencyStore {
  const store = new MemoryIdempotencyStore({
    maxKeys: DEFAULTS.idempotencyMaxKeys,
    maxKeysPerCaller: DEFAULTS.idempotencyMaxKeysPerCaller,
  });
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function' || name === 'ping') return value;
      return (...args: unknown[]) => {
        storeCalls.push(String(name));
        return value.apply(target, args);
      };
    },
  });
}

beforeAll(async () => {
  storeCalls = [];
  gw = await startTestGateway({
    // Room for 100 000 levels of nesting in one body; the depth limit must refuse them, not the size.
    config: { maxRequestBytes: 2_000_000 },
    infrastructure: { idempotencyStore: recordingStore() },
  });
  const merchant = await gw.sandbox.world.merchant();
  key = merchant.key;
  walletId = (await gw.sandbox.world.wallet(merchant.id)).id;
  await gw.sandbox.world.deposit(walletId, { amount: '5' });
});
afterAll(() => gw.close());
beforeEach(async () => {
  await gw.sandbox.admin('DELETE', '/faults');
  gw.resetCalls();
  storeCalls.length = 0;
});

interface Answer {
  status: number;
  text: string;
  /** The JSON body, or every part of a multipart or SSE answer. */
  // biome-ignore lint/suspicious/noExplicitAny: bodies are asserted structurally
  payloads: any[];
}

/** POSTs `body` as the merchant; reads a JSON, multipart/mixed or SSE answer into its payloads. */
async function send(
  body: string,
  options: { accept?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const response = await gw.gateway.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: options.accept ?? 'application/graphql-response+json',
      authorization: `Bearer ${key}`,
      ...options.headers,
    },
    body,
  });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  let payloads: unknown[];
  if (type.startsWith('multipart/mixed')) {
    payloads = text
      .split(/\r\n-{3,}/)
      .map((part) => part.split('\r\n\r\n')[1]?.trim())
      .filter((part): part is string => Boolean(part))
      .map((part) => JSON.parse(part));
  } else if (type.startsWith('text/event-stream')) {
    payloads = [...text.matchAll(/^event: next\ndata: (.*)$/gm)].map((m) => JSON.parse(m[1] as string));
  } else {
    payloads = [JSON.parse(text)];
  }
  return { status: response.status, text, payloads };
}

const json = (query: string, variables: Record<string, unknown> = {}) => JSON.stringify({ query, variables });

// biome-ignore lint/suspicious/noExplicitAny: payloads are asserted structurally
const errorsOf = (answer: Answer): any[] =>
  answer.payloads.flatMap((p) => [
    ...(p.errors ?? []),
    ...(p.incremental ?? []).flatMap((i: { errors?: unknown[] }) => i.errors ?? []),
  ]);

const gid = (type: string, id: string) => encodeGlobalID(type, id);
const b64url = (text: string) => Buffer.from(text).toString('base64url');

describe('every bad argument is a coded 4xx, never a 500', () => {
  it('@stream(initialCount: -1) is refused before execution: BAD_USER_INPUT, HTTP 400', async () => {
    const answer = await send(json('{ wallets { edges @stream(initialCount: -1) { cursor } } }'), {
      accept: 'multipart/mixed',
    });
    expect(answer.status).toBe(400);
    expect(answer.payloads).toEqual([
      {
        errors: [
          {
            message: '@stream(initialCount:) must be an integer of 0 or more; received -1',
            locations: [{ line: 1, column: 19 }],
            extensions: { code: 'BAD_USER_INPUT' },
          },
        ],
      },
    ]);
    expect(gw.upstreamCalls()).toEqual([]);
  });

  const CLIENT_CODES = ['BAD_USER_INPUT', 'GRAPHQL_VALIDATION_FAILED', 'QUERY_LIMIT_EXCEEDED'];
  it.each<[string, string, Record<string, unknown>?]>([
    ['@stream(initialCount: null)', '{ wallets { edges @stream(initialCount: null) { cursor } } }'],
    [
      '@stream(initialCount: $n), $n = -5',
      'query($n: Int) { wallets { edges @stream(initialCount: $n) { cursor } } }',
      { n: -5 },
    ],
    [
      '@stream on a list inside a list',
      '{ wallets { nodes { assets @stream(initialCount: -2) { currencyCode } } } }',
    ],
    [
      '@stream(if: $b), $b = null',
      'query($b: Boolean) { wallets { edges @stream(if: $b) { cursor } } }',
      { b: null },
    ],
    [
      '@defer(if: $b), $b = null',
      'query($b: Boolean) { wallets { ... @defer(if: $b) { totalCount } } }',
      { b: null },
    ],
    ['first: -1', '{ wallets(first: -1) { totalCount } }'],
    ['first: 2147483647', '{ wallets(first: 2147483647) { totalCount } }'],
    ['first: 99999999999', '{ wallets(first: 99999999999) { totalCount } }'],
    ['last: -1', '{ deposits(last: -1) { totalCount } }'],
    ['first: $n, $n = 1.5', 'query($n: Int) { deposits(first: $n) { totalCount } }', { n: 1.5 }],
    ['first: $n, $n = 1e300', 'query($n: Int) { deposits(first: $n) { totalCount } }', { n: 1e300 }],
    ['a cursor that is not base64', '{ deposits(after: "%%%") { totalCount } }'],
    ['a cursor of no offset', `{ deposits(before: "${b64url('c2:abcdefghij::x')}") { totalCount } }`],
    ['an empty id', '{ wallet(id: "") { id } }'],
    ['an id that is no node type', `{ node(id: "${gid('Foo', '1')}") { id } }`],
    ['a global id of another type', `{ wallet(id: "${gid('Deposit', 'd-1')}") { id } }`],
    ['a global id of no REST id', `{ deposit(id: "${gid('Deposit', 'ü\n')}") { id } }`],
    ['nodes of a malformed id', '{ nodes(ids: ["%%%"]) { id } }'],
    ['a status filter of UNKNOWN', '{ deposits(status: [UNKNOWN]) { totalCount } }'],
    ['a list nested 1000 deep for an ID', `{ node(id: ${'['.repeat(1000)}"x"${']'.repeat(1000)}) { id } }`],
    ['an unknown operationName', JSON.stringify({ query: '{ __typename }', operationName: 'Nope' })],
  ])('%s', async (_name, query, variables) => {
    const body = query.startsWith('{"') ? query : json(query, variables);
    const answer = await send(body, { accept: query.includes('@') ? 'multipart/mixed' : undefined });
    expect(answer.status).toBeLessThan(500);
    const errors = errorsOf(answer);
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) {
      expect(error.extensions?.code, error.message).not.toBe('INTERNAL_SERVER_ERROR');
      if (error.extensions?.code !== 'OPERATION_RESOLUTION_FAILURE')
        expect(CLIENT_CODES, error.message).toContain(error.extensions?.code);
    }
  });
});

describe('variables nested 100 000 levels deep', () => {
  const REFUSED = (what: string) => ({
    errors: [
      {
        message: `The request's ${what} nest objects and lists more than ${INPUT_LIMITS.variableDepth} levels deep; no input of this API does.`,
        extensions: { code: 'BAD_USER_INPUT' },
      },
    ],
  });
  const levels = 100_000;
  const deepObject = `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
  const deepList = `${'['.repeat(levels)}1${']'.repeat(levels)}`;
  const WALLETS = JSON.stringify('query { wallets(first: 1) { totalCount } }');

  it.each([
    ['an object', `{"query":${WALLETS},"variables":{"a":${deepObject}}}`, 'variables'],
    ['a list', `{"query":${WALLETS},"variables":{"a":${deepList}}}`, 'variables'],
    [
      'a list given to a declared Decimal',
      `{"query":${JSON.stringify('mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename } }')},"variables":{"input":{"walletId":"w","serviceFeeMode":"EXCLUSIVE","currencyCode":"USDT","amount":${deepList},"destination":{"type":"crypto","rail":"tron","identifier":"x"}}}}`,
      'variables',
    ],
    ['extensions', `{"query":${WALLETS},"extensions":{"a":${deepObject}}}`, 'extensions'],
  ])('%s: refused with a coded 400 before any work', async (_name, body, what) => {
    const answer = await send(body);
    expect(answer.status).toBe(400);
    expect(answer.payloads).toEqual([REFUSED(what)]);
    expect(gw.upstreamCalls()).toEqual([]);
    expect(storeCalls).toEqual([]);
  });

  it(`takes ${INPUT_LIMITS.variableDepth} levels, and refuses one more`, async () => {
    const nested = (n: number) => `${'['.repeat(n - 1)}1${']'.repeat(n - 1)}`;
    const body = (n: number) => `{"query":${WALLETS},"variables":{"a":${nested(n)}}}`;
    const deepest = await send(body(INPUT_LIMITS.variableDepth));
    expect(deepest.payloads).toEqual([{ data: { wallets: { totalCount: 1 } } }]);
    const past = await send(body(INPUT_LIMITS.variableDepth + 1));
    expect(past.status).toBe(400);
    expect(past.payloads).toEqual([REFUSED('variables')]);
  });
});

/** No run of more than 64 characters of `value` comes back (a periodic value: any window is its prefix). */
function expectNoEcho(answer: Answer, value: string) {
  expect(answer.text.length).toBeLessThan(2_000);
  expect(answer.text).not.toContain(value.slice(0, 65));
}

describe('no answer repeats more than a prefix of what the client sent', () => {
  const LONG = 'Z'.repeat(90_000);
  const SPACED = 'Z '.repeat(40_000);
  const CREATE =
    'mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename ... on UserError { message } } }';
  const input = (overrides: Record<string, unknown>) => ({ input: withdrawalInput(walletId, overrides) });

  it('a 90 KB currencyCode: a DataInvalidError quoting its first 32 characters', async () => {
    const answer = await send(json(CREATE, input({ currencyCode: LONG })));
    expect(answer.payloads).toEqual([
      {
        data: {
          createWithdrawalIntent: {
            __typename: 'DataInvalidError',
            message: `currencyCode must be USDT (the only currency allowed); received "${'Z'.repeat(32)}…"`,
          },
        },
      },
    ]);
    expect(gw.upstreamCalls()).toEqual([]);
  });

  it.each<[string, string, string]>([
    [
      'a string for an Int variable',
      json('query($n: Int) { wallets(first: $n) { totalCount } }', { n: LONG }),
      LONG,
    ],
    [
      'words for an Int variable',
      json('query($n: Int) { wallets(first: $n) { totalCount } }', { n: SPACED }),
      SPACED,
    ],
    ['a Decimal', json(CREATE, input({ amount: '1'.repeat(90_000) })), '1'.repeat(90_000)],
    ['an enum value', json(CREATE, input({ serviceFeeMode: LONG })), LONG],
    ['words for an enum value', json(CREATE, input({ serviceFeeMode: SPACED })), SPACED],
    ['the name of an unknown input field', json(CREATE, input({ [LONG]: 1 })), LONG],
    ['words naming an unknown input field', json(CREATE, input({ [SPACED]: 1 })), SPACED],
    ['the name of an unknown field', json(`{ ${LONG} }`), LONG],
    [
      'an Int literal for a String',
      json(`{ wallets { nodes { asset(currencyCode: ${'1'.repeat(90_000)}) { currencyCode } } } }`),
      '1'.repeat(90_000),
    ],
    ['a variable name', json(`query($${LONG}: Int) { __typename }`), LONG],
    ['an operation name', JSON.stringify({ query: '{ __typename }', operationName: LONG }), LONG],
    ['a node id', json('query($id: ID!) { node(id: $id) { id } }', { id: LONG }), LONG],
    ['a cursor', json('query($c: String) { deposits(after: $c) { totalCount } }', { c: LONG }), LONG],
  ])('%s', async (_name, body, value) => {
    expectNoEcho(await send(body), value);
  });

  it('an object of 5000 keys for a String variable is not listed key by key', async () => {
    const keys = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`key${i}`, 1]));
    const answer = await send(json(CREATE, input({ currencyCode: keys })));
    expect(answer.status).toBe(400);
    expect(answer.text.length).toBeLessThan(1_000);
    expect(answer.text).not.toContain('key100');
  });

  it('a list literal of 1000 strings for a String is not printed whole', async () => {
    const list = Array.from({ length: 1000 }, () => '"ab"').join(', ');
    const answer = await send(
      json(`{ wallets { nodes { asset(currencyCode: [${list}]) { currencyCode } } } }`),
    );
    expect(errorsOf(answer)[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(answer.text.length).toBeLessThan(1_000);
  });

  it('a documented REST message quoting a long value is passed on shortened', async () => {
    await gw.sandbox.admin('POST', '/faults', {
      method: 'GET',
      path: '/external/v1/deposits',
      status: 400,
      body: JSON.stringify({
        code: 'bad_request',
        message: `statusIn is invalid; received "${'Y'.repeat(3000)}"`,
        data: null,
      }),
    });
    const answer = await send(json('{ deposits { totalCount } }'));
    expect(errorsOf(answer)).toEqual([
      expect.objectContaining({
        message: `statusIn is invalid; received "${'Y'.repeat(32)}…"`,
        extensions: { code: 'BAD_USER_INPUT', upstream: { status: 400, code: 'bad_request' } },
      }),
    ]);
  });
});

/** Every argument and input field of the schema whose value is a string, by schema coordinate. */
function stringInputs(): string[] {
  const STRINGS = new Set(['String', 'ID', 'Decimal']);
  const coordinates: string[] = [];
  const add = (
    owner: string,
    inputs: readonly (GraphQLArgument | GraphQLInputField)[],
    argument: boolean,
  ) => {
    for (const input of inputs) {
      if (!STRINGS.has(getNamedType(input.type).name)) continue;
      coordinates.push(argument ? `${owner}(${input.name}:)` : `${owner}.${input.name}`);
    }
  };
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    if (isObjectType(type)) {
      for (const field of Object.values(type.getFields()))
        add(`${type.name}.${field.name}`, field.args, true);
    } else if (isInputObjectType(type)) {
      add(type.name, Object.values(type.getFields()), false);
    }
  }
  for (const directive of schema.getDirectives()) {
    if (!isSpecifiedDirective(directive)) add(`@${directive.name}`, directive.args, true);
  }
  return coordinates.sort();
}

describe('over-long scalar inputs are refused by length, before any work', () => {
  const TOO_LONG = 40_000;
  const long = 'x'.repeat(TOO_LONG);
  /** A global id as long as it gets: its REST id alone is 5000 characters. */
  const longGid = (type: string) => gid(type, 'a'.repeat(5_000));
  const cursor = b64url(`c2:abcdefghij:1:${'a'.repeat(TOO_LONG)}`);
  const CREATE =
    'mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename ... on DataInvalidError { field message } } }';
  const create = (overrides: Record<string, unknown>, destination: Record<string, unknown> = {}) =>
    json(CREATE, {
      input: withdrawalInput(walletId, {
        ...overrides,
        destination: { ...withdrawalInput(walletId).destination, ...destination },
      }),
    });

  interface Case {
    body: () => string;
    accept?: string;
    /** What names the field: `extensions.field` of the error, the UserError's `field`, or a message part. */
    field?: string[];
    userError?: string[];
    message?: string;
    /** Upstream calls the operation needs besides the refused argument (its parent's list). */
    upstream?: string[];
  }
  const wallets = ['GET /external/v1/wallets?page=1&size=20'];
  const connection = (field: string, argument: 'after' | 'before'): Case => ({
    body: () => json(`query($c: String) { ${field}(${argument}: $c) { totalCount } }`, { c: cursor }),
    field: [argument],
  });
  const walletConnection = (field: string, argument: 'after' | 'before'): Case => ({
    body: () =>
      json(`query($c: String) { wallets { nodes { ${field}(${argument}: $c) { totalCount } } } }`, {
        c: cursor,
      }),
    field: [argument],
    upstream: wallets,
  });
  const byId = (field: string, type: string): Case => ({
    body: () => json(`query($id: ID!) { ${field}(id: $id) { id } }`, { id: longGid(type) }),
    field: ['id'],
  });
  const CASES: Record<string, Case> = {
    '@defer(label:)': {
      body: () =>
        json(`{ wallets { ... @defer(label: "${'l'.repeat(INPUT_LIMITS.label + 1)}") { totalCount } } }`),
      accept: 'multipart/mixed',
      message: `@defer(label:) must be at most ${INPUT_LIMITS.label} characters; received ${INPUT_LIMITS.label + 1}`,
    },
    '@stream(label:)': {
      body: () =>
        json(`{ wallets { edges @stream(label: "${'l'.repeat(INPUT_LIMITS.label + 1)}") { cursor } } }`),
      accept: 'multipart/mixed',
      message: `@stream(label:) must be at most ${INPUT_LIMITS.label} characters; received ${INPUT_LIMITS.label + 1}`,
    },
    'CreateWithdrawalIntentInput.amount': {
      body: () => create({ amount: '1'.repeat(TOO_LONG) }),
      message: 'at "input.amount"; Decimal must be a string of digits',
    },
    'CreateWithdrawalIntentInput.currencyCode': {
      body: () => create({ currencyCode: long }),
      userError: ['input', 'currencyCode'],
    },
    'CreateWithdrawalIntentInput.idempotencyKey': {
      body: () => create({ idempotencyKey: long }),
      userError: ['input', 'idempotencyKey'],
    },
    'CreateWithdrawalIntentInput.walletId': {
      body: () => create({ walletId: longGid('Wallet') }),
      userError: ['input', 'walletId'],
    },
    'Query.deposit(id:)': byId('deposit', 'Deposit'),
    'Query.deposits(after:)': connection('deposits', 'after'),
    'Query.deposits(before:)': connection('deposits', 'before'),
    'Query.node(id:)': byId('node', 'Wallet'),
    'Query.nodes(ids:)': {
      body: () => json('query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: [longGid('Deposit')] }),
      field: ['id'],
    },
    'Query.wallet(id:)': byId('wallet', 'Wallet'),
    'Query.wallets(after:)': connection('wallets', 'after'),
    'Query.wallets(before:)': connection('wallets', 'before'),
    'Query.withdrawalIntent(id:)': byId('withdrawalIntent', 'WithdrawalIntent'),
    'Query.withdrawalIntents(after:)': connection('withdrawalIntents', 'after'),
    'Query.withdrawalIntents(before:)': connection('withdrawalIntents', 'before'),
    'Subscription.depositsUpdated(after:)': {
      body: () => json('subscription($a: String) { depositsUpdated(after: $a) { id } }', { a: long }),
      accept: 'text/event-stream',
      field: ['after'],
    },
    'Subscription.withdrawalIntentsUpdated(after:)': {
      body: () =>
        json('subscription($a: String) { withdrawalIntentsUpdated(after: $a) { id } }', { a: long }),
      accept: 'text/event-stream',
      field: ['after'],
    },
    'Subscription.withdrawalIntentUpdated(after:)': {
      body: () =>
        json('subscription($a: String) { withdrawalIntentUpdated(id: "x", after: $a) { id } }', { a: long }),
      accept: 'text/event-stream',
      field: ['after'],
    },
    'Subscription.depositsUpdated(walletId:)': {
      body: () =>
        json('subscription($walletId: ID) { depositsUpdated(walletId: $walletId) { id } }', {
          walletId: longGid('Wallet'),
        }),
      accept: 'text/event-stream',
      field: ['walletId'],
    },
    'Subscription.withdrawalIntentUpdated(id:)': {
      body: () =>
        json('subscription($id: ID!) { withdrawalIntentUpdated(id: $id) { id } }', {
          id: longGid('WithdrawalIntent'),
        }),
      accept: 'text/event-stream',
      field: ['id'],
    },
    'Wallet.asset(currencyCode:)': {
      body: () =>
        json('query($c: String!) { wallets { nodes { asset(currencyCode: $c) { currencyCode } } } }', {
          c: 'U'.repeat(INPUT_LIMITS.currencyCode + 1),
        }),
      field: ['currencyCode'],
      upstream: wallets,
    },
    'Wallet.deposits(after:)': walletConnection('deposits', 'after'),
    'Wallet.deposits(before:)': walletConnection('deposits', 'before'),
    'Wallet.withdrawalIntents(after:)': walletConnection('withdrawalIntents', 'after'),
    'Wallet.withdrawalIntents(before:)': walletConnection('withdrawalIntents', 'before'),
    'WithdrawalDestinationInput.identifier': {
      body: () => create({}, { identifier: 'T'.repeat(INPUT_LIMITS.tronAddress + 1) }),
      userError: ['input', 'destination', 'identifier'],
    },
    'WithdrawalDestinationInput.rail': {
      body: () => create({}, { rail: long }),
      userError: ['input', 'destination', 'rail'],
    },
    'WithdrawalDestinationInput.type': {
      body: () => create({}, { type: long }),
      userError: ['input', 'destination', 'type'],
    },
  };

  it('has a case here for every string argument and input field of the schema', () => {
    expect(Object.keys(CASES).sort()).toEqual(stringInputs());
  });

  it.each(Object.keys(CASES))('%s', async (coordinate) => {
    const expected = CASES[coordinate] as Case;
    const answer = await send(expected.body(), { accept: expected.accept });
    expect(answer.status).toBeLessThan(500);
    const errors = errorsOf(answer);
    if (expected.userError) {
      expect(errors).toEqual([]);
      const result = answer.payloads[0]?.data?.createWithdrawalIntent;
      expect(result).toMatchObject({ __typename: 'DataInvalidError', field: expected.userError });
    } else {
      expect(errors).toHaveLength(1);
      expect(errors[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      if (expected.field) expect(errors[0]?.extensions?.field).toEqual(expected.field);
      if (expected.message) expect(errors[0]?.message).toContain(expected.message);
    }
    expect(gw.upstreamCalls()).toEqual(expected.upstream ?? []);
    expect(storeCalls).toEqual([]);
    expect(answer.text.length).toBeLessThan(2_000);
  });
});

describe("the REST API's words reach a client only for the spec's documented codes", () => {
  const HOST = 'db-7.payments.internal:5432';

  it.each<[string, number, string]>([
    [
      'an unknown code on a 418',
      418,
      JSON.stringify({ code: 'teapot', message: `brewing on ${HOST}`, data: null }),
    ],
    [
      'an undocumented code on a 409',
      409,
      JSON.stringify({ code: 'lock_held', message: `lock on ${HOST}`, data: null }),
    ],
    [
      'an undocumented code on a 400',
      400,
      JSON.stringify({ code: 'shard_down', message: `shard ${HOST}`, data: null }),
    ],
    ['no code', 400, JSON.stringify({ message: `no route to ${HOST}`, data: null })],
  ])('%s: a generic message; the REST message logged under the request id', async (_name, status, body) => {
    await gw.sandbox.admin('POST', '/faults', { method: 'GET', path: '/external/v1/deposits', status, body });
    const requestId = `req-withheld-${status}-${body.length}`;
    const answer = await send(json('{ deposits(first: 2) { totalCount } }'), {
      headers: { 'x-request-id': requestId },
    });
    const code = (JSON.parse(body) as { code?: string }).code ?? null;
    expect(answer.payloads).toEqual([
      {
        data: { deposits: null },
        errors: [
          {
            message: `The REST API refused the request (HTTP ${status}); its answer is logged under this request's x-request-id.`,
            locations: [{ line: 1, column: 3 }],
            path: ['deposits'],
            extensions: { code: 'BAD_USER_INPUT', upstream: { status, code } },
          },
        ],
      },
    ]);
    const logged = gw.logs
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.msg === 'upstream message withheld' && entry.requestId === requestId);
    expect(logged).toEqual([
      expect.objectContaining({
        level: 40,
        requestId,
        path: 'deposits',
        upstream: { status, code },
        upstreamCode: code,
        upstreamMessage: expect.stringContaining(HOST),
      }),
    ]);
    const metrics = await gw.metrics.scrape();
    expect(metrics.body).not.toContain(HOST);
  });

  it('a code that is not a machine word is not repeated either', async () => {
    await gw.sandbox.admin('POST', '/faults', {
      method: 'GET',
      path: '/external/v1/deposits',
      status: 400,
      body: JSON.stringify({ code: `error at ${HOST}`, message: 'x', data: null }),
    });
    const answer = await send(json('{ deposits(first: 2) { totalCount } }'));
    expect(errorsOf(answer)[0]?.extensions).toEqual({
      code: 'BAD_USER_INPUT',
      upstream: { status: 400, code: null },
    });
    expect(answer.text).not.toContain(HOST);
  });

  it('a withdrawal refused with an undocumented code gets the generic message too', async () => {
    await gw.sandbox.admin('POST', '/faults', {
      method: 'POST',
      path: '/external/v1/withdrawal-intents',
      status: 409,
      body: JSON.stringify({ code: 'ledger_locked', message: `ledger ${HOST} locked`, data: null }),
    });
    const answer = await send(
      json(
        'mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename } }',
        {
          input: withdrawalInput(walletId),
        },
      ),
    );
    expect(errorsOf(answer)).toEqual([
      expect.objectContaining({
        message:
          "The REST API refused the request (HTTP 409); its answer is logged under this request's x-request-id.",
        extensions: { code: 'BAD_USER_INPUT', upstream: { status: 409, code: 'ledger_locked' } },
      }),
    ]);
    expect(answer.text).not.toContain(HOST);
  });
});
