import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../../src/config/config.ts';
import { startEmbeddedSandbox } from '../../../src/process/embedded-sandbox.ts';
import { restIdOf } from '../../../src/schema/global-ids.ts';
import { createLogger } from '../../../src/shared/logger.ts';
import { suiteLogDestination } from '../../support/suite-logs.ts';

// The embedded sandbox of `npm start` as a developer meets it, on simulated time (Date and the
// sandbox's interval timers; sockets and fetch run for real): GraphiQL's WatchWithdrawal tab opens
// on a demo intent still in flight however late the developer comes, which then walks to a final
// status within about 30 s; and the demo merchant gets a new deposit every so often.

const START = Date.parse('2026-11-24T12:00:00.000Z');
let sandbox: Awaited<ReturnType<typeof startEmbeddedSandbox>>;
let intentId: string;

beforeAll(async () => {
  vi.useFakeTimers({ now: START, toFake: ['Date', 'setInterval', 'clearInterval'] });
  // The defaults of `npm start`: auto-advance and new deposits on.
  sandbox = await startEmbeddedSandbox(parseConfig({}), createLogger('debug', suiteLogDestination()));
  intentId = restIdOf(sandbox.demo.withdrawalIntentId, 'WithdrawalIntent');
});
afterAll(async () => {
  await sandbox.stop();
  vi.useRealTimers();
});

async function rest(path: string) {
  const response = await fetch(`${sandbox.url}/external/v1${path}`, {
    headers: { authorization: `Bearer ${sandbox.demoKey}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: unknown }).data;
}
type Intent = { id: string; status: string; createdAt: string };
type Deposit = { id: string; status: string; createdAt: string; amount: string };

describe('the embedded sandbox demo', () => {
  it('opens the WatchWithdrawal tab on a new demo intent, held in preparing until it is read by id', async () => {
    const [newest] = (await rest('/withdrawal-intents?size=1')) as Intent[];
    expect(newest).toMatchObject({
      id: intentId,
      status: 'preparing',
      createdAt: new Date(START).toISOString(),
    });
    // Ten minutes later (lists of intents read meanwhile), still in flight.
    vi.advanceTimersByTime(10 * 60_000);
    const preparing = (await rest('/withdrawal-intents?size=100&statusIn=preparing')) as Intent[];
    expect(preparing.map((intent) => intent.id)).toContain(intentId);
  });

  it('gives the demo merchant a new pending deposit every 25 s, which completes on its own clock', async () => {
    const since = new Date(START).toISOString();
    const fresh = ((await rest('/deposits?size=100')) as Deposit[]).filter((d) => d.createdAt > since);
    // Ten minutes: 24 new deposits, all done but those of the last 16 s (two steps of 8 s).
    expect(fresh).toHaveLength(24);
    expect(fresh.filter((d) => d.status !== 'completed').map((d) => d.status)).toEqual(['pending']);
  });

  it('and a new small withdrawal every other time (50 s), which also advances on its own clock', async () => {
    const since = new Date(START).toISOString();
    const fresh = ((await rest('/withdrawal-intents?size=100')) as Intent[]).filter(
      (intent) => intent.createdAt > since && intent.id !== intentId,
    );
    expect(fresh).toHaveLength(12);
    // Done within 30 s: only the last one (made at 10 min) is still in flight.
    expect(fresh.filter((intent) => intent.status !== 'completed')).toHaveLength(1);
  });

  it('walks the demo intent through each status to completed within 30 s of its first read', async () => {
    const seen: string[] = [((await rest(`/withdrawal-intents/${intentId}`)) as Intent).status];
    for (let second = 0; second < 30; second++) {
      vi.advanceTimersByTime(1_000);
      const { status } = (await rest(`/withdrawal-intents/${intentId}`)) as Intent;
      if (status !== seen.at(-1)) seen.push(status);
    }
    expect(seen).toEqual(['preparing', 'reviewing', 'pending', 'completed']);
  });
});
