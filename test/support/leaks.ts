import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import type { MerchantWalletClient } from '../../src/upstream/client.ts';

/**
 * Leak checks for the fault tests. After a GraphQL request has answered, the upstream client must
 * hold no call, timer or coalesced GET, and its pool nothing running or queued; only idle
 * keep-alive sockets may stay. Polls briefly, because a socket the upstream reset closes on its
 * own tick.
 */
export async function expectClientSettled(client: MerchantWalletClient): Promise<void> {
  const settled = () => {
    const { calls, timers, coalescing, pool } = client.activity();
    return { calls, timers, coalescing, running: pool.running, pending: pool.pending, queued: pool.queued };
  };
  const idle = { calls: 0, timers: 0, coalescing: 0, running: 0, pending: 0, queued: 0 };
  for (let i = 0; i < 100 && JSON.stringify(settled()) !== JSON.stringify(idle); i++) await sleep(20);
  expect(settled()).toEqual(idle);
}

/** The process's handles that keep it alive (sockets, servers, timers), counted by type. */
export function handleCounts(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) {
    if (type === 'TCPSocketWrap' || type === 'TCPServerWrap' || type === 'Timeout') {
      counts[type] = (counts[type] ?? 0) + 1;
    }
  }
  return counts;
}

/**
 * After everything a test file started is closed, the process holds no more sockets, servers or
 * timers than before it started: nothing leaked.
 */
export async function expectNoHandlesAbove(baseline: Record<string, number>): Promise<void> {
  const above = () =>
    Object.entries(handleCounts())
      .filter(([type, count]) => count > (baseline[type] ?? 0))
      .map(([type, count]) => `${type}: ${count} (was ${baseline[type] ?? 0})`);
  for (let i = 0; i < 100 && above().length > 0; i++) await sleep(20);
  expect(above()).toEqual([]);
}
