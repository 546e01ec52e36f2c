import type { Gateway } from '../../src/yoga.ts';
import { startProcess } from './process.ts';
import { EXTERNAL_TRON_ADDRESS } from './sandbox.ts';
import { captureProcessOutput } from './suite-logs.ts';

/**
 * A gateway as a fleet runs it: `src/main.ts` in a process of its own, configured only through
 * its environment (REDIS_URL, REDIS_SENTINELS, REDIS_CLUSTER_NODES…), in front of `upstreamURL`.
 * `checkout`: the release to run (default: this one; the upgrade test gives the previous release's).
 */
export async function startGatewayProcess(
  upstreamURL: string,
  env: Record<string, string>,
  checkout?: string,
) {
  const started = await startProcess(
    'src/main.ts',
    [],
    { PORT: '0', UPSTREAM_URL: upstreamURL, LOG_LEVEL: 'info', NODE_ENV: 'development', ...env },
    /gateway: (http:\/\/\S+)\/graphql/,
    checkout,
  );
  const { url } = started;
  /** One GraphQL POST, as an app sends it; `timeoutMs` bounds the wait for its answer. */
  const graphql = async (
    key: string,
    query: string,
    variables: Record<string, unknown> = {},
    timeoutMs = 10_000,
  ) => {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    // biome-ignore lint/suspicious/noExplicitAny: results are asserted structurally
    return { status: response.status, body: (await response.json()) as { data?: any; errors?: any[] } };
  };
  return {
    ...started,
    graphql,
    /** createWithdrawalIntent of `amount` USDT from `walletId`; the payload's typename and intent, or the errors. */
    async withdraw(
      key: string,
      walletId: string,
      options: { idempotencyKey?: string; amount?: string; timeoutMs?: number } = {},
    ) {
      const { body } = await graphql(
        key,
        `mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) {
          __typename ... on CreateWithdrawalIntentSuccess { withdrawalIntent { restId status } } } }`,
        {
          input: {
            walletId,
            serviceFeeMode: 'EXCLUSIVE',
            currencyCode: 'USDT',
            amount: options.amount ?? '1.00',
            destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS },
            ...(options.idempotencyKey && { idempotencyKey: options.idempotencyKey }),
          },
        },
        options.timeoutMs,
      );
      return {
        intentId: body.data?.createWithdrawalIntent?.withdrawalIntent?.restId as string | undefined,
        errors: body.errors ?? [],
      };
    },
    /** The REST id of the caller's newest withdrawal intent, as this gateway lists it. */
    async newestWithdrawal(key: string): Promise<string | undefined> {
      const { body } = await graphql(key, '{ withdrawalIntents(first: 1) { edges { node { restId } } } }');
      return body.data?.withdrawalIntents?.edges[0]?.node.restId;
    },
    /**
     * GET a probe, bounded by `timeoutMs`. The default leaves a busy machine room above /readyz's
     * 800 ms answer bound, and stays below its 5 s check timeout, so a probe that waits on a hung
     * check still fails.
     */
    async probe(path: '/readyz' | '/healthz', timeoutMs = 4_000) {
      const response = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(timeoutMs) });
      return { status: response.status, body: (await response.json()) as Record<string, string> };
    },
    /** The process as a `Gateway` for the SSE helper: its fetch goes over HTTP to the process. */
    remote: {
      fetch: (input: string, init?: RequestInit) =>
        fetch(String(input).replace('http://gateway.test', url), init),
    } as unknown as Gateway,
    /** Stops the process and keeps its output with the suite's logs. */
    stop(label: string) {
      if (started.child.exitCode === null) started.child.kill('SIGKILL');
      captureProcessOutput(label, started.output());
    },
  };
}

export type GatewayProcess = Awaited<ReturnType<typeof startGatewayProcess>>;

/** Waits until `check` holds (trying every 100 ms) for at most `ms`, and says what it waited for. */
export async function eventually(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const giveUpAt = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > giveUpAt) throw new Error(`still not true after ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
