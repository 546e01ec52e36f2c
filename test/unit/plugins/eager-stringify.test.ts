import type { ExecutionResult } from 'graphql';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useEagerStringify } from '../../../src/plugins/eager-stringify.ts';

const schema = createSchema({
  typeDefs: 'type Query { greeting: String! failing: String }',
  resolvers: {
    Query: {
      greeting: () => 'héllo "world"',
      failing: () => {
        throw new Error('boom');
      },
    },
  },
});

async function post(plugins: Plugin[], query: string) {
  const yoga = createYoga({ schema, plugins, logging: false, maskedErrors: false });
  const response = await yoga.fetch('http://yoga.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return response.text();
}

/** Runs after useEagerStringify has serialised the result, where Yoga's own plugins work. */
function onResult(change: (result: ExecutionResult, set: (r: ExecutionResult) => void) => void): Plugin {
  return {
    onResultProcess({ result, setResult }) {
      change(result as ExecutionResult, setResult);
    },
  };
}

describe('useEagerStringify', () => {
  it('sends exactly what JSON.stringify gives, from a serialiser no copy of the result carries', async () => {
    let seen: ExecutionResult | undefined;
    const text = await post([useEagerStringify(), onResult((result) => (seen = result))], '{ greeting }');
    expect(text).toBe(JSON.stringify({ data: { greeting: 'héllo "world"' } }));
    expect(Object.hasOwn(seen as object, 'stringify')).toBe(true);
    expect(Object.keys(seen as object)).toEqual(['data']);
    expect(Object.hasOwn({ ...seen }, 'stringify')).toBe(false);
  });

  it('serialises afresh a result replaced after it', async () => {
    const text = await post(
      [useEagerStringify(), onResult((result, set) => set({ ...result, extensions: { replaced: true } }))],
      '{ greeting }',
    );
    expect(JSON.parse(text)).toEqual({ data: { greeting: 'héllo "world"' }, extensions: { replaced: true } });
  });

  it('serialises afresh a result given extensions in place after it', async () => {
    const text = await post(
      [
        useEagerStringify(),
        onResult((result) => {
          (result as { extensions?: unknown }).extensions = { added: 1 };
        }),
      ],
      '{ greeting }',
    );
    expect(JSON.parse(text)).toEqual({ data: { greeting: 'héllo "world"' }, extensions: { added: 1 } });
  });

  it('sends the text made when execution completed: an edit of `data` in place after it is not seen', async () => {
    const text = await post(
      [
        useEagerStringify(),
        onResult((result) => {
          (result.data as { greeting: string }).greeting = 'edited';
        }),
      ],
      '{ greeting }',
    );
    expect(text).toBe(JSON.stringify({ data: { greeting: 'héllo "world"' } }));
  });

  it('leaves results with errors to Yoga', async () => {
    let seen: ExecutionResult | undefined;
    const text = await post(
      [useEagerStringify(), onResult((result) => (seen = result))],
      '{ greeting failing }',
    );
    expect(Object.hasOwn(seen as object, 'stringify')).toBe(false);
    expect(JSON.parse(text)).toMatchObject({
      data: { greeting: 'héllo "world"', failing: null },
      errors: [{ message: 'boom', path: ['failing'] }],
    });
  });
});
