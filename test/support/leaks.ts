import { createHook } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { MerchantWalletClient } from '../../src/upstream/client.ts';
import type { TestGateway } from './gateway.ts';

/**
 * Polls `done` until it holds, or gives up. What the checks wait for (a socket the upstream reset,
 * a server closing) takes a few turns of the event loop, which a busy machine makes slow; a leak
 * lasts a second or more of the clock. So the wait ends once 50 turns and 500 ms have both passed
 * (5 s at most): a busy machine gets its turns, and a leaked timer of a second still shows where
 * the machine is not busy.
 */
async function settle(done: () => boolean): Promise<void> {
  const start = performance.now();
  for (let turns = 0; !done(); turns++) {
    const elapsed = performance.now() - start;
    if ((turns >= 50 && elapsed >= 500) || elapsed >= 5_000) return;
    await sleep(10);
  }
}

/**
 * Leak checks for the fault tests. After a GraphQL request has answered, the upstream client must
 * hold no call, timer or coalesced GET, and its pool nothing running or queued; only idle
 * keep-alive sockets may stay. Polls a while (settle), because a socket the upstream reset closes
 * on its own tick.
 */
export async function expectClientSettled(client: MerchantWalletClient): Promise<void> {
  const settled = () => {
    const { calls, timers, coalescing, pool } = client.activity();
    return { calls, timers, coalescing, running: pool.running, pending: pool.pending, queued: pool.queued };
  };
  const idle = { calls: 0, timers: 0, coalescing: 0, running: 0, pending: 0, queued: 0 };
  await settle(() => JSON.stringify(settled()) === JSON.stringify(idle));
  expect(settled()).toEqual(idle);
}

/**
 * Every live timer the code under test created, by async id, with where it was created. Tracked
 * with an async hook rather than process.getActiveResourcesInfo(), which misses timers that share
 * a duration list. Timers vitest and these checks make for themselves, and unref'd ones, are left
 * out.
 */
const liveTimers = new Map<number, string>();
createHook({
  init(id, type, _trigger, resource) {
    // Unref'd timers (Node's own socket timeouts among them) hold nothing open; leave them out.
    if (type !== 'Timeout' || !(resource as NodeJS.Timeout).hasRef()) return;
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 40;
    const frames = (new Error().stack ?? '').split('\n').slice(2);
    Error.stackTraceLimit = limit;
    if (frames.some((f) => f.includes('/node_modules/vitest/') || f.includes('/test/support/leaks.ts')))
      return;
    const site = frames.find((f) => !f.includes('(node:')) ?? frames.join(' < ');
    liveTimers.set(id, site.trim());
  },
  destroy(id) {
    liveTimers.delete(id);
  },
}).enable();

interface Handles {
  sockets: number;
  servers: number;
  timers: Set<number>;
}

function handles(): Handles {
  const types = process.getActiveResourcesInfo();
  return {
    sockets: types.filter((t) => t === 'TCPSocketWrap').length,
    servers: types.filter((t) => t === 'TCPServerWrap').length,
    timers: new Set(liveTimers.keys()),
  };
}

/**
 * After everything a test file started is closed, the process holds no more sockets or servers
 * than before it started, and no timer made since: nothing leaked.
 */
async function expectNoHandlesAbove(before: Handles): Promise<void> {
  const above = () => {
    const now = handles();
    return [
      ...(now.sockets > before.sockets ? [`sockets: ${now.sockets} (was ${before.sockets})`] : []),
      ...(now.servers > before.servers ? [`servers: ${now.servers} (was ${before.servers})`] : []),
      ...[...now.timers]
        .filter((id) => !before.timers.has(id))
        .map((id) => `timer from ${liveTimers.get(id)}`),
    ];
  };
  // Long enough for closed sockets to go, short enough that a leaked timer of a second or more shows.
  await settle(() => above().length === 0);
  expect(above()).toEqual([]);
}

/**
 * For a fault test file: call before the file's own beforeAll. After each test the faults are
 * cleared and the client must have settled; after the file, the gateway is closed and the process
 * must hold no more handles than before it began.
 */
export function closeWithoutLeaks(gateway: () => TestGateway): void {
  let before: Handles = handles();
  beforeAll(() => {
    before = handles();
  });
  afterEach(async () => {
    await gateway().sandbox.admin('DELETE', '/faults');
    await expectClientSettled(gateway().client);
  });
  afterAll(async () => {
    await gateway().close();
    await expectNoHandlesAbove(before);
  });
}
