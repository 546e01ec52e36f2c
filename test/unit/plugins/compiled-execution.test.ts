import { type DocumentNode, GraphQLError } from 'graphql';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { GatewayContext } from '../../../src/context.ts';
import {
  COMPILE_AFTER_USES,
  CompiledQueries,
  MAX_COMPILED_FIELDS,
  useCompiledExecution,
} from '../../../src/plugins/compiled-execution.ts';
import { maskUncodedError } from '../../../src/plugins/error-contract.ts';

interface Wallet {
  id: string;
  currency?: string;
}

const WALLETS: Wallet[] = [{ id: 'w1', currency: 'USDT' }, { id: 'w2' }, { id: 'w3', currency: 'TRX' }];

const schema = createSchema<Record<string, unknown> & GatewayContext>({
  typeDefs: /* GraphQL */ `
    type Query {
      wallets(first: Int): [Wallet!]
      wallet(id: ID): Wallet
      broken: [Wallet!]
      nodes: [Wallet]!
      failing: String
    }
    type Wallet { id: ID! currency: String! label: String }
    type Mutation { rename(id: ID!): Wallet }
  `,
  resolvers: {
    Query: {
      wallets: (_root, args: { first?: number }) => WALLETS.slice(0, args.first ?? WALLETS.length),
      wallet: (_root, args: { id?: string }) => WALLETS.find((w) => w.id === args.id) ?? null,
      // One item without its non-null currency nulls the whole list: the usual executor reports it once.
      broken: () => WALLETS,
      nodes: () => WALLETS,
      failing: () => {
        throw new GraphQLError('The REST API failed.', { extensions: { code: 'UPSTREAM_ERROR' } });
      },
    },
    Wallet: { label: (wallet: Wallet) => Promise.resolve(`label of ${wallet.id}`) },
    Mutation: { rename: (_root, args: { id: string }) => WALLETS.find((w) => w.id === args.id) ?? null },
  },
});

const GOOD_KEY = 'Bearer accepted';

/** A gateway with compiled execution as yoga.ts wires it; `documents` is each execution's document. */
function gateway() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const compiled = new CompiledQueries();
  const documents: DocumentNode[] = [];
  const recorder: Plugin = { onExecute: ({ args }) => void documents.push(args.document) };
  const asked: unknown[] = [];
  const yoga = createYoga<Record<string, unknown>, GatewayContext>({
    schema,
    logging: false,
    maskedErrors: { maskError: maskUncodedError },
    context: ({ request }) =>
      ({ authorization: request.headers.get('authorization') }) as unknown as GatewayContext,
    plugins: [
      recorder,
      useCompiledExecution({
        logger,
        // yoga.ts asks the client whether the caller's key was accepted lately.
        mayCompile: (context) => {
          asked.push(context.authorization);
          return context.authorization === GOOD_KEY;
        },
        compiled,
      }),
    ],
  });
  const post = async (
    query: string,
    options: { variables?: object; operationName?: string; key?: string } = {},
  ) => {
    const response = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        authorization: options.key ?? GOOD_KEY,
      },
      body: JSON.stringify({ query, variables: options.variables, operationName: options.operationName }),
    });
    return `${response.status} ${await response.text()}`;
  };
  const decisions = () =>
    lines.map(({ operationName, compiled, why, msg }) => ({ operationName, compiled, why, msg }));
  const compiledNow = (operationName?: string) => {
    const document = documents.at(-1);
    return document !== undefined && compiled.find(document, operationName) !== undefined;
  };
  return { post, decisions, compiledNow, asked };
}

/** Sends `query` until it is compiled: every answer, and the same request once compiled. */
async function answersBeforeAndAfter(g: ReturnType<typeof gateway>, query: string, variables?: object) {
  const before = new Set<string>();
  for (let use = 1; use < COMPILE_AFTER_USES; use++) {
    before.add(await g.post(query, { variables }));
    expect(g.compiledNow()).toBe(false);
  }
  before.add(await g.post(query, { variables }));
  expect(g.compiledNow()).toBe(true);
  const after = await g.post(query, { variables });
  return { before: [...before], after };
}

describe('useCompiledExecution', () => {
  it(`compiles a query on its ${COMPILE_AFTER_USES}th execution, once, and answers exactly as before`, async () => {
    const g = gateway();
    const anonymous = await answersBeforeAndAfter(g, '{ wallets(first: 2) { id label } }');
    expect(anonymous.before).toEqual([anonymous.after]);
    const query = 'query Screen($n: Int, $id: ID) { wallets(first: $n) { id label } wallet(id: $id) { id } }';
    const { before, after } = await answersBeforeAndAfter(g, query, { n: 2, id: 'w1' });
    expect(before).toEqual([after]);
    expect(after).toBe(
      `200 ${JSON.stringify({
        data: {
          wallets: [
            { id: 'w1', label: 'label of w1' },
            { id: 'w2', label: 'label of w2' },
          ],
          wallet: { id: 'w1' },
        },
      })}`,
    );
    expect(g.decisions()).toEqual([
      { operationName: null, compiled: true, why: undefined, msg: 'operation compiled' },
      { operationName: 'Screen', compiled: true, why: undefined, msg: 'operation compiled' },
    ]);
  });

  it('compiles only for a key mayCompile accepts, asking it from the threshold on', async () => {
    const g = gateway();
    for (let use = 0; use < COMPILE_AFTER_USES + 2; use++)
      await g.post('{ wallets { id } }', { key: 'Bearer made-up' });
    expect(g.compiledNow()).toBe(false);
    expect(g.asked).toEqual(['Bearer made-up', 'Bearer made-up', 'Bearer made-up']);
    expect(g.decisions()).toEqual([]);
    await g.post('{ wallets { id } }');
    expect(g.compiledNow()).toBe(true);
  });

  it('runs on the usual executor what graphql-jit does not answer exactly, saying why once', async () => {
    const g = gateway();
    const many = Array.from({ length: MAX_COMPILED_FIELDS }, (_, i) => `a${i}: id`).join(' ');
    const cases: [string, string][] = [
      ['query($s: Boolean!) { wallets { id @skip(if: $s) } }', '@skip or @include'],
      ['{ wallet(id: "w1") { id } }', 'a string literal'],
      ['{ wallets { __proto__: id } }', 'a __proto__ alias'],
      ['{ nodes { id } }', 'the non-null root field nodes'],
      ['mutation { rename(id: "w1") { id } }', 'mutation'],
      [`{ wallets { ${many} currency } }`, `more than ${MAX_COMPILED_FIELDS} fields`],
    ];
    for (const [query] of cases) {
      for (let use = 0; use < COMPILE_AFTER_USES + 1; use++) await g.post(query, { variables: { s: false } });
      expect(g.compiledNow(), query).toBe(false);
    }
    expect(g.decisions()).toEqual(
      cases.map(([, why]) => ({
        operationName: null,
        compiled: false,
        why,
        msg: 'operation runs on the usual executor',
      })),
    );
  });

  it('keeps a compiled query per operation name of a document', async () => {
    const g = gateway();
    const query = 'query A { wallets { id } } query B { wallets { label } }';
    for (let use = 0; use < COMPILE_AFTER_USES; use++) await g.post(query, { operationName: 'A' });
    expect(g.compiledNow('A')).toBe(true);
    expect(g.compiledNow('B')).toBe(false);
    expect(await g.post(query, { operationName: 'B' })).toBe(
      `200 ${JSON.stringify({ data: { wallets: WALLETS.map((w) => ({ label: `label of ${w.id}` })) } })}`,
    );
    expect(g.compiledNow('B')).toBe(false);
  });

  it('answers field errors with their locations, path and code, as the usual executor does', async () => {
    const g = gateway();
    const { before, after } = await answersBeforeAndAfter(
      g,
      'query($n: Int) {\n  wallets(first: $n) { id }\n  failing\n}',
      {
        n: 1,
      },
    );
    expect(before).toEqual([after]);
    expect(JSON.parse(after.slice(4))).toEqual({
      data: { wallets: [{ id: 'w1' }], failing: null },
      errors: [
        {
          message: 'The REST API failed.',
          locations: [{ line: 3, column: 3 }],
          path: ['failing'],
          extensions: { code: 'UPSTREAM_ERROR' },
        },
      ],
    });
  });

  it('answers through the usual executor an error that nulls past its field, and variables that cannot be coerced', async () => {
    const g = gateway();
    const query = 'query($n: Int) { broken { id currency } wallets(first: $n) { id } }';
    const { before, after } = await answersBeforeAndAfter(g, query, { n: 1 });
    expect(before).toEqual([after]);
    // One error, for the first item without a currency; graphql-jit alone would list every one.
    expect(JSON.parse(after.slice(4)).errors).toEqual([
      {
        message: 'Unexpected error.',
        locations: [{ line: 1, column: query.indexOf('currency') + 1 }],
        path: ['broken', 1, 'currency'],
        extensions: { code: 'INTERNAL_SERVER_ERROR' },
      },
    ]);
    // Variables graphql-jit cannot coerce: the usual executor's own words, once compiled as before.
    const unCompiled = await gateway().post(query, { variables: { n: 'many' } });
    expect(unCompiled).toMatch(/Int cannot represent non-integer value/);
    expect(await g.post(query, { variables: { n: 'many' } })).toBe(unCompiled);
  });
});
