import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useIncrementalDelivery } from '../../../src/plugins/incremental-delivery.ts';
import { INPUT_LIMITS } from '../../../src/schema/input-limits.ts';

/** Resolver calls: a refused request must make none. */
let calls = 0;

const schema = createSchema({
  typeDefs: 'type Query { balance: String wallets: [String] }',
  resolvers: {
    Query: {
      balance: () => {
        calls++;
        return '10.00';
      },
      wallets: () => {
        calls++;
        return ['a', 'b', 'c'];
      },
    },
  },
});

/** The validation rules each request's document was checked with, as a plugin after it sees them. */
const rulesSeen: string[][] = [];
const ruleRecorder: Plugin = {
  onValidate({ params }) {
    rulesSeen.push((params.rules ?? []).map((rule: { name: string }) => rule.name));
  },
};

const yoga = createYoga({ schema, logging: false, plugins: [useIncrementalDelivery(), ruleRecorder] });

async function post(query: string, variables: Record<string, unknown> = {}, accept = 'multipart/mixed') {
  const response = await yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

/** A refusal before execution: its status and its one error's message and code. */
async function refusal(query: string, variables: Record<string, unknown> = {}, accept?: string) {
  calls = 0;
  const { status, text } = await post(query, variables, accept ?? 'application/json, multipart/mixed');
  expect(calls).toBe(0);
  const { errors } = JSON.parse(text) as { errors: { message: string; extensions: { code: string } }[] };
  expect(errors).toHaveLength(1);
  return { status, message: errors[0]?.message, code: errors[0]?.extensions.code };
}

describe('useIncrementalDelivery', () => {
  it('delivers @defer and @stream over multipart/mixed', async () => {
    const deferred = await post('{ balance ... @defer { wallets } }');
    expect(deferred.status).toBe(200);
    expect(deferred.type).toMatch(/^multipart\/mixed/);
    expect(deferred.text).toContain('{"data":{"balance":"10.00"},"hasNext":true}');
    expect(deferred.text).toContain('"incremental":[{"data":{"wallets":["a","b","c"]},"path":[]}]');
    const streamed = await post('{ wallets @stream(initialCount: 1) }');
    expect(streamed.text).toContain('{"data":{"wallets":["a"]},"hasNext":true}');
    // No Accept takes anything: a stream.
    expect((await post('{ balance ... @defer { wallets } }', {}, '')).type).toMatch(/^multipart\/mixed/);
  });

  it('refuses a negative or null initialCount with 400 and BAD_USER_INPUT, in fragments too', async () => {
    expect(await refusal('{ wallets @stream(initialCount: -1) }')).toEqual({
      status: 400,
      code: 'BAD_USER_INPUT',
      message: '@stream(initialCount:) must be an integer of 0 or more; received -1',
    });
    expect(await refusal('query($n: Int) { wallets @stream(initialCount: $n) }', { n: null })).toEqual({
      status: 400,
      code: 'BAD_USER_INPUT',
      message: '@stream(initialCount:) must be an integer of 0 or more; received null',
    });
    expect(await refusal('{ ...F } fragment F on Query { wallets @stream(initialCount: -2) }')).toMatchObject(
      { status: 400, code: 'BAD_USER_INPUT' },
    );
  });

  it('refuses a null `if` and a label longer than INPUT_LIMITS.label', async () => {
    expect(await refusal('query($d: Boolean) { ... @defer(if: $d) { balance } }', { d: null })).toEqual({
      status: 400,
      code: 'BAD_USER_INPUT',
      message: '@defer: Argument "if" of non-null type "Boolean!" must not be null.',
    });
    expect(
      await refusal(`{ ... @defer(label: "${'l'.repeat(INPUT_LIMITS.label + 1)}") { balance } }`),
    ).toEqual({
      status: 400,
      code: 'BAD_USER_INPUT',
      message: `@defer(label:) must be at most ${INPUT_LIMITS.label} characters; received ${INPUT_LIMITS.label + 1}`,
    });
  });

  it('refuses with 406 and NOT_ACCEPTABLE, before anything runs, a stream the client cannot take', async () => {
    // A stream in another charset than utf-8 is no stream Yoga sends.
    for (const accept of [
      'application/json',
      'application/graphql-response+json',
      'application/json, multipart/mixed;charset=latin1',
    ]) {
      expect(await refusal('{ balance ... @defer { wallets } }', {}, accept)).toMatchObject({
        status: 406,
        code: 'NOT_ACCEPTABLE',
      });
    }
  });

  it('answers one JSON result when every @defer and @stream is turned off with `if: false`', async () => {
    const off = await post(
      'query($d: Boolean!) { balance ... @defer(if: $d) { wallets } }',
      { d: false },
      'application/json',
    );
    expect(off).toEqual({
      status: 200,
      type: 'application/json; charset=utf-8',
      text: JSON.stringify({ data: { balance: '10.00', wallets: ['a', 'b', 'c'] } }),
    });
  });

  it("checks @defer and @stream's validation rules only for documents that use them", async () => {
    rulesSeen.length = 0;
    await post('{ balance }', {}, 'application/json');
    await post('{ balance ... @defer { wallets } }');
    expect(rulesSeen[0]).not.toContain('StreamDirectiveOnListFieldRule');
    expect(rulesSeen[1]).toContain('StreamDirectiveOnListFieldRule');
    const misplaced = await post('{ balance @stream }', {}, 'application/graphql-response+json');
    expect(misplaced.status).toBe(400);
    expect(JSON.parse(misplaced.text).errors).toEqual([
      {
        message: 'Stream directive cannot be used on non-list field "balance" on type "Query".',
        locations: [{ line: 1, column: 11 }],
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
      },
    ]);
  });
});
