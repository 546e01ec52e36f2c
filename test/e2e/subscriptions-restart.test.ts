import { createClient as createSSEClient } from 'graphql-sse';
import { createClient as createWSClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, startGatewayProcess } from '../support/fleet-process.ts';
import { type RunningRedis, startRedis } from '../support/redis.ts';
import { startTestSandbox, type TestSandbox, withdrawalBody } from '../support/sandbox.ts';
import { recordSuiteKey } from '../support/suite-logs.ts';

/**
 * Subscriptions through a gateway restart, with the real client libraries as apps configure
 * them (docs/subscriptions.md): a gateway process with Redis is SIGTERMed and started again on
 * the same port while withdrawals and deposits move to final statuses, some while it is down.
 * Every client keeps the last event id it received and sends it when it reconnects (graphql-sse:
 * the Last-Event-ID header; graphql-ws: the `after` variable of the payload it re-sends). No
 * stream may complete because of the restart, and no final status may be missed.
 */

let redis: RunningRedis;
let sandbox: TestSandbox;
let key: string;
let walletId: string;
let gateway: GatewayProcess;
const env = () => ({ REDIS_URL: redis.url, SUBSCRIPTION_POLL_MS: '50', SUBSCRIPTION_POLL_MAX_MS: '200' });

beforeAll(async () => {
  redis = await startRedis();
  sandbox = await startTestSandbox();
  const merchant = await sandbox.world.merchant();
  key = merchant.key;
  recordSuiteKey(key);
  walletId = (await sandbox.world.wallet(merchant.id, { USDT: '100000', TRX: '100' })).id;
  gateway = await startGatewayProcess(sandbox.url, env());
}, 60_000);
afterAll(async () => {
  gateway?.stop('subscriptions-restart');
  await sandbox?.close();
  await redis?.close();
});

const WATCH =
  'subscription W($id: ID!, $after: String) { withdrawalIntentUpdated(id: $id, after: $after) { restId status } }';
const LIST = 'subscription L($after: String) { withdrawalIntentsUpdated(after: $after) { restId status } }';
const DEPOSITS = 'subscription D($after: String) { depositsUpdated(after: $after) { restId status } }';

/** What one subscription received: its results by record, and how it ended. */
class Seen {
  readonly statuses = new Map<string, string[]>();
  lastEventId: string | undefined;
  completed = 0;
  errors: unknown[] = [];
  private waiters: (() => void)[] = [];
  // biome-ignore lint/suspicious/noExplicitAny: results are asserted structurally
  next(result: any) {
    const id = result.extensions?.eventId;
    if (typeof id === 'string') this.lastEventId = id;
    const value = result.data && Object.values(result.data)[0];
    if (value) this.statuses.set(value.restId, [...(this.statuses.get(value.restId) ?? []), value.status]);
    if (result.errors) this.errors.push(...result.errors);
    for (const wake of this.waiters.splice(0)) wake();
  }
  complete() {
    this.completed += 1;
    for (const wake of this.waiters.splice(0)) wake();
  }
  /** Resolves once `check` holds after some result. */
  async until(check: () => boolean): Promise<void> {
    while (!check()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
  last(id: string) {
    return this.statuses.get(id)?.at(-1);
  }
}

const quickRetry = () => new Promise<void>((resolve) => setTimeout(resolve, 100));

function sseSubscribe(query: string, variables: Record<string, unknown>): Seen {
  const seen = new Seen();
  const client = createSSEClient({
    url: () => `${gateway.url}/graphql`,
    headers: () => ({
      authorization: `Bearer ${key}`,
      ...(seen.lastEventId && { 'last-event-id': seen.lastEventId }),
    }),
    retryAttempts: Number.POSITIVE_INFINITY,
    retry: quickRetry,
  });
  client.subscribe(
    { query, variables },
    { next: (r) => seen.next(r), error: (e) => seen.errors.push(e), complete: () => seen.complete() },
  );
  return seen;
}

function wsSubscribe(query: string, variables: Record<string, unknown>): Seen {
  const seen = new Seen();
  const client = createWSClient({
    url: () => `${gateway.url.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: `Bearer ${key}` },
    retryAttempts: Number.POSITIVE_INFINITY,
    retryWait: quickRetry,
    shouldRetry: () => true,
    lazy: true,
  });
  // graphql-ws re-sends this very payload when it reconnects: the last event id goes in it.
  const payload = { query, variables: { ...variables } as Record<string, unknown> };
  client.subscribe(payload, {
    next: (r) => {
      seen.next(r);
      if (seen.lastEventId) payload.variables.after = seen.lastEventId;
    },
    error: (e) => seen.errors.push(e),
    complete: () => seen.complete(),
  });
  return seen;
}

async function createIntent(): Promise<string> {
  const created = await sandbox.call('POST', '/external/v1/withdrawal-intents', {
    key,
    body: withdrawalBody(walletId, { amount: '1.00' }),
  });
  return created.body.data.id as string;
}

async function restart(whileDown: () => Promise<void>) {
  const port = new URL(gateway.url).port;
  gateway.child.kill('SIGTERM');
  expect(await gateway.exited).toBe(0);
  await whileDown();
  gateway = await startGatewayProcess(sandbox.url, { ...env(), PORT: port });
}

describe('subscriptions through a gateway restart', () => {
  // Clients retry every 100 ms, so upgrades and requests reach the process while it drains: it
  // must still exit 0 (test/integration/gateway/edge.test.ts has each case alone). Lists and
  // deposits have two subscribers each, resuming at about the same moment into one poller
  // (test/unit/live-polling.test.ts has the race of their reads alone).
  it('no stream completes because of it and no final status is missed, over SSE and WebSocket, for one intent, the list and deposits', async () => {
    const intents = await Promise.all(Array.from({ length: 6 }, () => createIntent()));
    const watchers = intents.flatMap((id) => [sseSubscribe(WATCH, { id }), wsSubscribe(WATCH, { id })]);
    const lists = [sseSubscribe(LIST, {}), wsSubscribe(LIST, {})];
    const deposits = [sseSubscribe(DEPOSITS, {}), wsSubscribe(DEPOSITS, {})];
    // Everyone is in: each watcher saw its intent, the feeds saw a first change.
    await Promise.all(watchers.map((w) => w.until(() => w.statuses.size === 1)));
    const first = await createIntent();
    const firstDeposit = (await sandbox.world.deposit(walletId, { amount: '1', status: 'pending' })).id;
    for (const feed of [...lists, ...deposits]) {
      await feed.until(() => feed.statuses.has(first) || feed.statuses.has(firstDeposit));
    }
    const finals = new Map<string, string>();
    const settle = async (ids: string[], status: string) => {
      for (const id of ids) {
        const path = status === 'cancelled' ? [status] : ['reviewing', 'pending', status];
        for (const step of path) await sandbox.world.transitionWithdrawal(id, step);
        finals.set(id, status.toUpperCase());
      }
    };
    const depositFinals = new Map<string, string>();
    const deposit = async (status: string) => {
      const id = (await sandbox.world.deposit(walletId, { amount: '2', status: 'pending' })).id;
      await sandbox.world.transitionDeposit(id, status);
      depositFinals.set(id, status.toUpperCase());
    };

    await settle(intents.slice(0, 2), 'completed');
    await deposit('completed');
    // The last news before the restart reached the list feeds, so what follows is resumed from ids.
    for (const feed of lists) await feed.until(() => feed.last(intents[1] ?? '') === 'COMPLETED');

    await restart(async () => {
      // While no gateway runs: news that only a resume can bring.
      await settle(intents.slice(2, 4), 'failed');
      await settle([first], 'cancelled');
      await deposit('failed');
    });
    await settle(intents.slice(4), 'completed');
    await deposit('completed');

    for (const [i, id] of intents.entries()) {
      for (const watcher of watchers.slice(2 * i, 2 * i + 2)) {
        await watcher.until(() => watcher.completed > 0);
        expect(watcher.last(id)).toBe(finals.get(id));
        expect(watcher.completed).toBe(1);
        expect(watcher.errors).toEqual([]);
      }
    }
    for (const feed of lists) {
      await feed.until(() => [...finals].every(([id, status]) => feed.last(id) === status));
      expect(feed.completed).toBe(0);
      expect(feed.errors).toEqual([]);
    }
    for (const feed of deposits) {
      await feed.until(() => [...depositFinals].every(([id, status]) => feed.last(id) === status));
      expect(feed.completed).toBe(0);
      expect(feed.errors).toEqual([]);
    }
  });
});
