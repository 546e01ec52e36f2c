import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { createSchema, createYoga } from 'graphql-yoga';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { GatewayContext } from '../../../src/context.ts';
import { badUserInput, GatewayError, upstreamTimeout } from '../../../src/errors/errors.ts';
import { maskUncodedError } from '../../../src/plugins/error-contract.ts';
import { useErrorLogging } from '../../../src/plugins/error-logging.ts';

const KEY = 'Bearer mw_test_4f1c2b9e';

const schema = createSchema<Record<string, unknown> & GatewayContext>({
  typeDefs: /* GraphQL */ `
    type Query { timeout: String withheld: String refused: String bug: String fine: String }
    type Subscription { ticks: String }
  `,
  resolvers: {
    Query: {
      timeout: () => {
        throw upstreamTimeout(
          Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' }),
        );
      },
      withheld: () => {
        throw new GatewayError('UPSTREAM_ERROR', 'The REST API failed.', {
          upstream: { status: 500, code: 'db_down' },
          withheld: { code: 'db_down', message: `replica lag ${'x'.repeat(5_000)}` },
        });
      },
      refused: () => {
        throw badUserInput('amount must be positive');
      },
      bug: () => {
        throw new TypeError("Cannot read properties of undefined (reading 'amount')");
      },
      fine: () => 'ok',
    },
    Subscription: {
      ticks: {
        subscribe: async function* () {
          yield { ticks: 'first' };
        },
        resolve: () => {
          throw upstreamTimeout(new Error('poll timed out'));
        },
      },
    },
  },
});

/** A gateway whose request logger (context.logger(), as createContextFactory makes it) writes into `lines`. */
function gateway() {
  const lines: Record<string, unknown>[] = [];
  const base = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  let requests = 0;
  const yoga = createYoga<Record<string, unknown>, GatewayContext>({
    schema,
    logging: false,
    maskedErrors: { maskError: maskUncodedError },
    context: ({ request }) => {
      const requestId = `req-${++requests}`;
      return {
        authorization: request.headers.get('authorization'),
        requestId,
        logger: () => base.child({ requestId }),
      } as unknown as GatewayContext;
    },
    plugins: [useErrorLogging(), useDeferStream()],
  });
  const post = async (query: string, accept = 'application/json') => {
    const response = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept, authorization: KEY },
      body: JSON.stringify({ query }),
    });
    return response.text();
  };
  /** What was logged, without pino's own fields. */
  const logged = () => lines.map(({ time: _time, pid: _pid, hostname: _hostname, ...rest }) => rest);
  return { post, logged, lines };
}

describe('useErrorLogging', () => {
  it('logs the cause behind an upstream failure at warn, with the request id and path', async () => {
    const { post, logged } = gateway();
    await post('{ timeout }');
    expect(logged()).toEqual([
      {
        level: 40,
        requestId: 'req-1',
        code: 'UPSTREAM_TIMEOUT',
        path: 'timeout',
        cause: 'Headers Timeout Error',
        causeCode: 'UND_ERR_HEADERS_TIMEOUT',
        msg: 'upstream failure',
      },
    ]);
  });

  it('logs what the REST API said when the client got a generic message, cut to 2048 characters', async () => {
    const { post, logged } = gateway();
    expect(JSON.parse(await post('{ withheld }')).errors[0].message).toBe('The REST API failed.');
    const withheld = logged().filter((line) => line.msg === 'upstream message withheld');
    expect(withheld).toEqual([
      {
        level: 40,
        requestId: 'req-1',
        code: 'UPSTREAM_ERROR',
        upstream: { status: 500, code: 'db_down' },
        path: 'withheld',
        upstreamCode: 'db_down',
        upstreamMessage: `replica lag ${'x'.repeat(5_000)}`.slice(0, 2_048),
        msg: 'upstream message withheld',
      },
    ]);
  });

  it('logs an unexpected error, which the client sees masked, at error with its stack', async () => {
    const { post, logged } = gateway();
    expect(JSON.parse(await post('{ bug }')).errors[0].message).toBe('Unexpected error.');
    expect(logged()).toMatchObject([
      {
        level: 50,
        requestId: 'req-1',
        path: 'bug',
        err: { type: 'TypeError', message: "Cannot read properties of undefined (reading 'amount')" },
        msg: 'unexpected error',
      },
    ]);
    const err = logged()[0]?.err as { stack?: string } | undefined;
    expect(err?.stack).toContain('TypeError');
  });

  it("logs nothing for errors the client is told in full, nor for a request's own mistakes", async () => {
    const { post, lines } = gateway();
    await post('{ refused fine }');
    await post('{ unknownField }');
    await post('{ fine');
    expect(lines).toEqual([]);
  });

  it("reads a stream's payloads and a subscription's events, and never logs the key", async () => {
    const { post, logged, lines } = gateway();
    await post('{ fine ... @defer { timeout } }', 'multipart/mixed');
    await post('subscription { ticks }', 'text/event-stream');
    expect(logged()).toMatchObject([
      { requestId: 'req-1', code: 'UPSTREAM_TIMEOUT', path: 'timeout', msg: 'upstream failure' },
      { requestId: 'req-2', code: 'UPSTREAM_TIMEOUT', path: 'ticks', cause: 'poll timed out' },
    ]);
    expect(JSON.stringify(lines)).not.toContain('mw_test_4f1c2b9e');
  });
});
