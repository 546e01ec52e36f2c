import { type ExecutionResult, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { MAX_REPRESENTATIONS, useEntitiesBound } from '../../src/plugins/entities-bound.ts';

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
