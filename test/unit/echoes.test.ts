import { GraphQLError, parse, validate } from 'graphql';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import {
  ECHO_MAX,
  MESSAGE_MAX,
  quoted,
  shortenEchoes,
  shortenErrorEchoes,
  shortValue,
} from '../../src/errors/echoes.ts';
import { useQueryDeduplication } from '../../src/plugins/query-deduplication.ts';
import { schema } from '../../src/schema/index.ts';
import { isNestedDeeper } from '../../src/schema/input-limits.ts';

const LONG = 'A'.repeat(10_000);
const PREFIX = `${'A'.repeat(32)}…`;

describe('shortValue and quoted', () => {
  it('keep a value of up to 64 characters whole, and cut a longer one to 32 and "…"', () => {
    expect(shortValue('A'.repeat(ECHO_MAX))).toBe('A'.repeat(ECHO_MAX));
    expect(shortValue('A'.repeat(ECHO_MAX + 1))).toBe(PREFIX);
    expect(quoted(LONG)).toBe(`"${PREFIX}"`);
    expect(quoted({ a: 1 })).toBe('an object');
    expect(quoted([1])).toBe('a list');
    expect(quoted(null)).toBe('null');
    expect(quoted(-1)).toBe('-1');
  });

  it('never cut a surrogate pair in half', () => {
    expect(shortValue(`${'A'.repeat(31)}${'😀'.repeat(40)}`)).toBe(`${'A'.repeat(31)}…`);
  });
});

describe('shortenEchoes', () => {
  it('cuts long quoted values and long words, and leaves short ones', () => {
    expect(shortenEchoes(`Cannot query field "${LONG}" on type "Query".`)).toBe(
      `Cannot query field "${PREFIX}" on type "Query".`,
    );
    expect(shortenEchoes(`received ${LONG} here`)).toBe(`received ${PREFIX} here`);
    const spaced = 'A '.repeat(5_000);
    expect(shortenEchoes(`Value "${spaced}" does not exist`)).toBe(
      `Value "${'A '.repeat(16)}…" does not exist`,
    );
    const ours = "The operation's cost 30000 exceeds the limit of 20000: ask for fewer items per connection.";
    expect(shortenEchoes(ours)).toBe(ours);
  });

  it(`never answers more than ${MESSAGE_MAX} characters`, () => {
    expect(shortenEchoes('AB '.repeat(10_000)).length).toBe(MESSAGE_MAX + 1);
  });

  it('stays linear on a message of unpaired, escaped quotes', () => {
    const hostile = `"${'\\"'.repeat(200_000)}`;
    const started = performance.now();
    expect(shortenEchoes(hostile).length).toBeLessThan(100);
    // Linear takes milliseconds here; quadratic, over 400,000 characters, takes minutes. The bound
    // tells them apart on any machine, however busy.
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});

describe('shortenErrorEchoes', () => {
  it('cuts a literal graphql-js printed whole, though each of its words is short', () => {
    const list = Array.from({ length: 500 }, () => '"ab"').join(', ');
    const document = parse(`{ wallets { nodes { asset(currencyCode: [${list}]) { currencyCode } } } }`);
    const [error] = validate(schema, document);
    expect(error?.message.length).toBeGreaterThan(3_000);
    shortenErrorEchoes(error as GraphQLError);
    expect(error?.message).toBe(
      'String cannot represent a non string value: ["ab", "ab", "ab", "ab", "ab", "…"',
    );
  });

  it("cuts a variable's value where graphql-js repeats it, and keeps the reason", () => {
    const reason = new GraphQLError(`Int cannot represent non-integer value: "${LONG}"`);
    const error = new GraphQLError(
      `Variable "$n" got invalid value "${LONG}" at "n.amount"; ${reason.message}`,
      {
        originalError: reason,
      },
    );
    shortenErrorEchoes(error);
    expect(error.message).toBe(
      `Variable "$n" got invalid value "${'A'.repeat(31)}…" at "n.amount"; Int cannot represent non-integer value: "${'A'.repeat(31)}…"`,
    );
  });

  it('cuts an object graphql-js lists key by key', () => {
    const keys = Array.from({ length: 1_000 }, (_, i) => `k${i}: 1`).join(', ');
    const reason = new GraphQLError(`String cannot represent a non string value: { ${keys} }`);
    const error = new GraphQLError(`Variable "$c" got invalid value { ${keys} }; ${reason.message}`, {
      originalError: reason,
    });
    shortenErrorEchoes(error);
    expect(error.message).toBe(
      'Variable "$c" got invalid value { k0: 1, k1: 1, k2: 1, k3: 1, k4…; String cannot represent a non string value: { k0: 1, k1: 1, k2: 1, k3: 1, k4…',
    );
  });
});

describe('isNestedDeeper', () => {
  it('measures objects and lists, without recursion', () => {
    expect(isNestedDeeper(1, 0)).toBe(false);
    expect(isNestedDeeper({}, 0)).toBe(true);
    expect(isNestedDeeper({ a: [{ b: 1 }] }, 3)).toBe(false);
    expect(isNestedDeeper({ a: [{ b: 1 }] }, 2)).toBe(true);
    let deep: unknown = 1;
    for (let i = 0; i < 1_000_000; i++) deep = [deep];
    expect(isNestedDeeper(deep, 16)).toBe(true);
    expect(isNestedDeeper(deep, 2_000_000)).toBe(false);
  });
});

describe('useQueryDeduplication', () => {
  it('runs a query whose variables cannot be serialised on its own, never failing it', async () => {
    const yoga = createYoga({
      schema: createSchema({
        typeDefs: 'type Query { greeting: String! }',
        resolvers: { Query: { greeting: () => 'hi' } },
      }),
      plugins: [useQueryDeduplication({ generationScope: () => 'scope' }) as Plugin],
      logging: false,
    });
    const levels = 100_000;
    const response = await yoga.fetch('http://yoga.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"query":"{ greeting }","variables":{"a":${'['.repeat(levels)}1${']'.repeat(levels)}}}`,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { greeting: 'hi' } });
  });
});
