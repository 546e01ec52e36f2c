import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import type { GatewayContext } from '../../../src/context.ts';
import { KeptResults } from '../../../src/plugins/kept-results.ts';
import {
  ResultSharing,
  type SharedHow,
  sharedResultOf,
  useQueryDeduplication,
} from '../../../src/plugins/query-deduplication.ts';
import { type CachedReads, type Read, RequestReads } from '../../../src/upstream/reads.ts';

const TTL_MS = 1_000;

/** The micro-cache as query deduplication sees it: a clock of the test's, and which answers are still cached. */
function microCache() {
  const cache = {
    at: 0,
    gone: new Set<string>(),
    keptMaxBytes: 1_000_000,
    ttlMs: TTL_MS,
    now: () => cache.at,
    isCurrent: (reads: readonly Read[]) =>
      reads.every((read) => !cache.gone.has(read.key) && read.until > cache.at),
  };
  return cache satisfies CachedReads;
}

interface Options {
  sharing?: ResultSharing;
  cache?: ReturnType<typeof microCache>;
}

/**
 * A gateway whose `greeting` resolver waits until `arrivals` requests have reached execution, so
 * that requests sent together are all in flight at once. Each request's scope is its
 * Authorization header (none: not shared), as MerchantWalletClient.generationScope would give.
 */
function gateway({ sharing, cache }: Options = {}) {
  const executions: string[] = [];
  const shared: { how: SharedHow; context: GatewayContext }[] = [];
  const contexts: GatewayContext[] = [];
  let arrivals = 0;
  let expected = 1;
  let release!: () => void;
  let gate = new Promise<void>((resolve) => (release = resolve));
  let failNext = false;
  const results: unknown[] = [];
  /** Counts the requests reaching execution (before deduplication, as every plugin it runs after), and sees their results. */
  const arriving: Plugin = {
    onExecute() {
      if (++arrivals >= expected) release();
      return {
        onExecuteDone({ result }) {
          results.push(result);
        },
      };
    },
  };
  const yoga = createYoga({
    schema: createSchema<GatewayContext>({
      typeDefs: /* GraphQL */ `
        scalar Any
        type Query { greeting(name: String, any: Any): String! }
        type Mutation { touch: String! }
      `,
      resolvers: {
        Query: {
          greeting: async (_root, { name }: { name?: string }, context) => {
            executions.push(name ?? '');
            contexts.push(context);
            // What the micro-cache would note for a 2xx read through it.
            context.caller.reads.read({
              key: `GET /greeting/${name ?? ''}`,
              serial: 1,
              until: cache ? cache.at + TTL_MS : 0,
            });
            await gate;
            if (failNext) {
              failNext = false;
              throw new Error('the REST API failed');
            }
            return `hello ${name ?? 'you'}`;
          },
        },
        Mutation: {
          touch: async () => {
            executions.push('touch');
            await gate;
            return 'touched';
          },
        },
      },
    }),
    logging: false,
    context: ({ request }: { request: Request }) => ({
      caller: { scope: request.headers.get('authorization') ?? '', reads: new RequestReads() },
    }),
    plugins: [
      arriving,
      useQueryDeduplication({
        generationScope: (context) => context.caller.scope || null,
        ...(sharing && { sharing }),
        onShared: (context, how) => shared.push({ how, context }),
      }) as Plugin,
    ],
  });
  const post = async (body: Record<string, unknown> | string, authorization: string | null = 'scope-a') => {
    const response = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization && { authorization }) },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return response.json();
  };
  /** Sends the requests together: none executes before all have reached execution. */
  const together = (...requests: [Record<string, unknown> | string, (string | null)?][]) => {
    arrivals = 0;
    expected = requests.length;
    gate = new Promise<void>((resolve) => (release = resolve));
    return Promise.all(requests.map(([body, authorization]) => post(body, authorization)));
  };
  return {
    together,
    post,
    executions,
    shared,
    contexts,
    results,
    failNextExecution: () => {
      failNext = true;
    },
  };
}

const GREETING = { query: '{ greeting }' };

describe('useQueryDeduplication, in flight', () => {
  it('answers identical queries of one caller arriving while one executes with its result', async () => {
    const g = gateway();
    const answers = await g.together([GREETING], [GREETING], [GREETING]);
    expect(answers).toEqual([0, 1, 2].map(() => ({ data: { greeting: 'hello you' } })));
    expect(g.executions).toEqual(['']);
    expect(g.shared.map((s) => s.how)).toEqual(['in_flight', 'in_flight']);
    // The access log's sharedResult: the joiners', not the one that executed.
    expect(g.shared.map((s) => sharedResultOf(s.context))).toEqual(['in_flight', 'in_flight']);
    expect(sharedResultOf(g.contexts[0] as GatewayContext)).toBeNull();
  });

  it('never shares across callers, nor for a request without a scope', async () => {
    const g = gateway();
    await g.together([GREETING, 'scope-a'], [GREETING, 'scope-b'], [GREETING, null], [GREETING, null]);
    expect(g.executions).toHaveLength(4);
    expect(g.shared).toEqual([]);
  });

  it('shares only the same operation with the same values of its declared variables', async () => {
    const g = gateway();
    const named = 'query Q($name: String) { greeting(name: $name) } query R { greeting }';
    await g.together(
      [{ query: named, operationName: 'Q', variables: { name: 'ann' } }],
      [{ query: named, operationName: 'Q', variables: { name: 'bob' } }],
      [{ query: named, operationName: 'R' }],
      // Undeclared variables are ignored by graphql-js, and so here.
      [{ query: named, operationName: 'Q', variables: { name: 'ann', unused: 1 } }],
    );
    expect(g.executions.sort()).toEqual(['', 'ann', 'bob']);
    expect(g.shared.map((s) => s.how)).toEqual(['in_flight']);
  });

  it('never shares a mutation', async () => {
    const g = gateway();
    const answers = await g.together([{ query: 'mutation { touch }' }], [{ query: 'mutation { touch }' }]);
    expect(answers).toEqual([{ data: { touch: 'touched' } }, { data: { touch: 'touched' } }]);
    expect(g.executions).toEqual(['touch', 'touch']);
  });

  it('keeps a failed result to its own request: each joiner then executes on its own', async () => {
    const g = gateway();
    g.failNextExecution();
    const [failed, joiner] = await g.together([GREETING], [GREETING]);
    expect(failed).toMatchObject({ data: null, errors: [{ path: ['greeting'] }] });
    expect(joiner).toEqual({ data: { greeting: 'hello you' } });
    expect(g.executions).toEqual(['', '']);
    expect(g.shared).toEqual([]);
  });

  it('shares nothing once the execution is over, without kept results', async () => {
    const g = gateway();
    await g.together([GREETING]);
    await g.together([GREETING]);
    expect(g.executions).toEqual(['', '']);
  });

  it("runs a query whose variables have no JSON text on its own, never as another's", async () => {
    const g = gateway();
    // 1e400 arrives as Infinity, which JSON.stringify would write as null: another request's value.
    const body = (n: string) => `{"query":"query($n: Any) { greeting(any: $n) }","variables":{"n":${n}}}`;
    const answers = await g.together([body('null')], [body('1e400')]);
    expect(answers).toEqual([{ data: { greeting: 'hello you' } }, { data: { greeting: 'hello you' } }]);
    expect(g.executions).toEqual(['', '']);
    expect(g.shared).toEqual([]);
  });
});

describe('useQueryDeduplication, kept', () => {
  function kept() {
    const cache = microCache();
    return { cache, ...gateway({ cache, sharing: new ResultSharing(new KeptResults(cache)) }) };
  }

  it('answers an identical query after the execution with the kept result while what it read is cached', async () => {
    const g = kept();
    const first = await g.together([GREETING]);
    g.cache.at += TTL_MS - 1;
    const again = await g.post(GREETING);
    expect(again).toEqual(first[0]);
    expect(g.executions).toEqual(['']);
    expect(g.shared.map((s) => s.how)).toEqual(['kept']);
    expect(sharedResultOf(g.shared[0]?.context as GatewayContext)).toBe('kept');
  });

  it('executes again once a REST answer it read has left the cache, or was replaced', async () => {
    const g = kept();
    await g.together([GREETING]);
    g.cache.at += TTL_MS;
    await g.together([GREETING]);
    expect(g.executions).toEqual(['', '']);
    g.cache.gone.add('GET /greeting/');
    await g.together([GREETING]);
    expect(g.executions).toEqual(['', '', '']);
    expect(g.shared).toEqual([]);
  });

  it('keeps results per caller scope', async () => {
    const g = kept();
    await g.together([GREETING, 'scope-a']);
    await g.together([GREETING, 'scope-b']);
    expect(g.executions).toEqual(['', '']);
  });

  it('freezes a kept result, so no request can change what another receives', async () => {
    const g = kept();
    await g.together([GREETING]);
    await g.post(GREETING);
    const [executed, answered] = g.results as { data: object }[];
    expect(answered).toBe(executed);
    expect(Object.isFrozen(answered?.data)).toBe(true);
  });

  it('keeps no result whose REST answers have already left the cache', async () => {
    const cache = microCache();
    const g = gateway({ sharing: new ResultSharing(new KeptResults(cache)) });
    // Without `cache` the resolver's reads leave the cache at 0, the cache's time now.
    await g.together([GREETING]);
    await g.together([GREETING]);
    expect(g.executions).toEqual(['', '']);
  });

  it('keeps no failed result', async () => {
    const g = kept();
    g.failNextExecution();
    await g.together([GREETING]);
    await g.together([GREETING]);
    expect(g.executions).toEqual(['', '']);
  });
});
