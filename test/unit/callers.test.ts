import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { createCallers } from '../../src/upstream/callers.ts';
import { MerchantWalletClient } from '../../src/upstream/client.ts';

const config = parseConfig({ REQUEST_DEADLINE_MS: '2000', MAX_UPSTREAM_CALLS_PER_REQUEST: '7' });
const client = new MerchantWalletClient({ ...config.upstream, baseURL: 'http://127.0.0.1:9' });
afterAll(() => client.close());

describe('the callers (src/upstream/callers.ts)', () => {
  const callers = createCallers(client, config);

  it("give a request REQUEST_DEADLINE_MS from now and MAX_UPSTREAM_CALLS_PER_REQUEST calls, under its key's scope", () => {
    const before = Date.now();
    const caller = callers.forRequest('Bearer k', 'request-1');
    expect(caller).toMatchObject({
      authorization: 'Bearer k',
      scope: client.scopes.scopeOf('Bearer k'),
      calls: { made: 0, max: 7 },
      requestId: 'request-1',
    });
    expect(caller.deadline).toBeGreaterThanOrEqual(before + 2_000);
    expect(caller.deadline).toBeLessThanOrEqual(Date.now() + 2_000);
    // Each has a budget of its own: a subscription's events and polls are requests of their own.
    caller.calls.made = 7;
    expect(callers.forRequest('Bearer k').calls).toEqual({ made: 0, max: 7 });
    expect(callers.forRequest('Bearer k')).not.toHaveProperty('requestId');
  });

  it('give a call outside any request one call, within the request deadline or the time it is given', () => {
    const before = Date.now();
    const step = callers.forOneCall('Bearer k');
    expect(step.calls).toEqual({ made: 0, max: 1 });
    expect(step.deadline).toBeGreaterThanOrEqual(before + 2_000);
    const proof = callers.forOneCall('Bearer k', 500);
    expect(proof.calls.max).toBe(1);
    expect(proof.deadline).toBeLessThanOrEqual(Date.now() + 500);
    expect(callers.requestDeadlineMs).toBe(2_000);
  });

  it('leave a caller made directly by the client unbounded', () => {
    const caller = client.caller('Bearer k');
    expect(caller.calls.max).toBe(Number.POSITIVE_INFINITY);
    expect(caller).not.toHaveProperty('deadline');
  });
});
