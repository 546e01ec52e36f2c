import { type ExecutionResult, parse } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { MAX_REPRESENTATIONS, useEntitiesBound } from '../../../src/plugins/entities-bound.ts';

/** The representation bound (src/plugins/entities-bound.ts) on its own: what it counts. */
function verdict(query: string, variables: Record<string, unknown> = {}, max = 3): ExecutionResult | null {
  let result: ExecutionResult | null = null;
  const plugin = useEntitiesBound(max) as {
    onExecute: (payload: { args: unknown; setResultAndStopExecution: (r: ExecutionResult) => void }) => void;
  };
  plugin.onExecute({
    args: { document: parse(query), variableValues: variables, operationName: undefined },
    setResultAndStopExecution: (r) => {
      result = r;
    },
  });
  return result;
}

const list = (n: number) => Array.from({ length: n }, () => ({ __typename: 'Wallet', id: 'x' }));
const literal = (n: number) =>
  `[${Array.from({ length: n }, () => '{ __typename: "Wallet", id: "x" }').join(', ')}]`;

describe('the representation bound', () => {
  it('defaults to 1000', () => expect(MAX_REPRESENTATIONS).toBe(1000));

  it('counts variables, literals, variable defaults and aliases together', () => {
    const q = 'query($r: [_Any!]!) { _entities(representations: $r) { __typename } }';
    expect(verdict(q, { r: list(3) })).toBeNull();
    expect(verdict(q, { r: list(4) })?.errors?.[0]?.extensions).toMatchObject({
      code: 'QUERY_LIMIT_EXCEEDED',
      representations: 4,
      maxRepresentations: 3,
    });
    expect(verdict(`{ _entities(representations: ${literal(4)}) { __typename } }`)).not.toBeNull();
    // A default the request leaves in place is what runs.
    expect(
      verdict(`query($r: [_Any!]! = ${literal(4)}) { _entities(representations: $r) { __typename } }`),
    ).not.toBeNull();
    expect(
      verdict(
        'query($a: [_Any!]!, $b: [_Any!]!) { a: _entities(representations: $a) { __typename } b: _entities(representations: $b) { __typename } }',
        { a: list(2), b: list(2) },
      ),
    ).not.toBeNull();
    // In a fragment too.
    expect(
      verdict(
        'query($r: [_Any!]!) { ...F } fragment F on Query { _entities(representations: $r) { __typename } }',
        {
          r: list(4),
        },
      ),
    ).not.toBeNull();
  });
});

describe('useEntitiesBound through yoga.fetch', () => {
  /** Representations resolved: a refused request must resolve none. */
  let resolved = 0;
  const schema = createSchema({
    typeDefs: 'scalar _Any type Query { _entities(representations: [_Any!]!): [String]! }',
    resolvers: {
      Query: {
        _entities: (_: unknown, args: { representations: unknown[] }) =>
          args.representations.map(() => {
            resolved++;
            return 'entity';
          }),
      },
    },
  });
  const yoga = createYoga({ schema, logging: false, plugins: [useEntitiesBound(3)] });
  const post = async (query: string, variables: Record<string, unknown>) => {
    const response = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: await response.json() };
  };
  const query = 'query($r: [_Any!]!) { _entities(representations: $r) }';

  it('resolves a batch within the bound', async () => {
    resolved = 0;
    expect(await post(query, { r: list(3) })).toEqual({
      status: 200,
      body: { data: { _entities: ['entity', 'entity', 'entity'] } },
    });
    expect(resolved).toBe(3);
  });

  it('refuses a batch past the bound with 400 and QUERY_LIMIT_EXCEEDED, before anything resolves', async () => {
    resolved = 0;
    expect(await post(query, { r: list(4) })).toEqual({
      status: 400,
      body: {
        data: null,
        errors: [
          {
            message:
              "_entities was asked for 4 representations; at most 3 may be resolved in one request: split the query plan's batch.",
            extensions: { code: 'QUERY_LIMIT_EXCEEDED', representations: 4, maxRepresentations: 3 },
          },
        ],
      },
    });
    expect(resolved).toBe(0);
  });

  it('leaves an operation without _entities alone', async () => {
    expect(await post('{ __typename }', {})).toEqual({
      status: 200,
      body: { data: { __typename: 'Query' } },
    });
  });
});
