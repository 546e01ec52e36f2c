import { describe, expect, it } from 'vitest';
import type { GatewayError } from '../../src/errors/errors.ts';
import type { UpstreamResponse } from '../../src/upstream/call.ts';
import { KeyEvidence } from '../../src/upstream/key-evidence.ts';

/**
 * The rules of key evidence (upstream/key-evidence.ts) on answers given by hand: which answers
 * refuse or accept a key, what waits behind a key's first call, and how long a refusal lasts.
 * The integration tests (test/integration/gateway/key-evidence.test.ts) show the same against the
 * sandbox.
 */

const answer = (status: number, code: string | null = null): UpstreamResponse => ({
  status,
  json: { code, message: 'm', data: null },
  text: '',
});

/** A REST API answering each call with `response` once `release` is called; counts the calls sent. */
function upstream(response: UpstreamResponse | Error) {
  let release = () => {};
  const answered = new Promise<void>((resolve) => {
    release = resolve;
  });
  const api = {
    sent: 0,
    release: () => release(),
    send: async () => {
      api.sent++;
      await answered;
      if (response instanceof Error) throw response;
      return response;
    },
  };
  return api;
}

/** Twenty calls of one scope at once; what each got. */
function twenty(evidence: KeyEvidence, send: () => Promise<UpstreamResponse>) {
  return Promise.allSettled(Array.from({ length: 20 }, () => evidence.send('scope', send)));
}

describe('key evidence', () => {
  it('a key not known yet: one call, then every waiting call fails with the same 401 unsent', async () => {
    const evidence = new KeyEvidence(30_000);
    const api = upstream(answer(401, 'unauthorized'));
    const calls = twenty(evidence, api.send);
    await Promise.resolve();
    expect(api.sent).toBe(1);
    api.release();
    const results = await calls;
    expect(api.sent).toBe(1);
    expect(results[0]).toEqual({ status: 'fulfilled', value: answer(401, 'unauthorized') });
    for (const result of results.slice(1)) {
      expect(result.status).toBe('rejected');
      const error = (result as PromiseRejectedResult).reason as GatewayError;
      expect(error.code).toBe('UNAUTHENTICATED');
      expect(error.extensions).toEqual({
        code: 'UNAUTHENTICATED',
        upstream: { status: 401, code: 'unauthorized' },
      });
    }
    expect(evidence.refusal('scope')?.message).toBe('The API key was not accepted.');
  });

  it('a key not known yet: after a 2xx the waiting calls all go; it is accepted', async () => {
    const evidence = new KeyEvidence(30_000);
    const api = upstream(answer(200, 'ok'));
    const calls = twenty(evidence, api.send);
    await Promise.resolve();
    expect(api.sent).toBe(1);
    api.release();
    expect((await calls).every((r) => r.status === 'fulfilled')).toBe(true);
    expect(api.sent).toBe(20);
    expect(evidence.isKnownGood('scope')).toBe(true);
  });

  it.each([
    ['a 403 (a real key without the permission)', answer(403, 'forbidden')],
    ['a 503', answer(503)],
    ['a bare 400 bad_request', answer(400, 'bad_request')],
    ['no answer (a timeout)', new Error('timeout')],
  ])('%s is no evidence: the waiting calls go ahead, and the key stays unknown', async (_, response) => {
    const evidence = new KeyEvidence(30_000);
    const api = upstream(response);
    const calls = twenty(evidence, api.send);
    api.release();
    await calls;
    expect(api.sent).toBe(20);
    expect(evidence.isKnownGood('scope')).toBe(false);
    expect(evidence.refusal('scope')).toBeUndefined();
  });

  it("a business refusal only the key's merchant can get accepts the key", async () => {
    const evidence = new KeyEvidence(30_000);
    const api = upstream(answer(400, 'withdrawal_intent.balance_insufficient'));
    api.release();
    await evidence.send('scope', api.send);
    expect(evidence.isKnownGood('scope')).toBe(true);
  });

  it('a refusal lasts the TTL: a key made valid meanwhile is asked about again after it', async () => {
    // Not 0: lru-cache takes a start time of 0 for none.
    let now = 1_000_000;
    const evidence = new KeyEvidence(30_000, () => now);
    const refused = upstream(answer(401, 'unauthorized'));
    refused.release();
    await evidence.send('scope', refused.send);
    now += 29_999;
    await expect(evidence.send('scope', refused.send)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(refused.sent).toBe(1);
    now += 2;
    const valid = upstream(answer(200, 'ok'));
    valid.release();
    await evidence.send('scope', valid.send);
    expect(valid.sent).toBe(1);
    expect(evidence.isKnownGood('scope')).toBe(true);
  });

  it('a revoked key loses its acceptance at its first 401; with the TTL at 0 nothing is remembered', async () => {
    const evidence = new KeyEvidence(0);
    const ok = upstream(answer(200, 'ok'));
    ok.release();
    await evidence.send('scope', ok.send);
    const revoked = upstream(answer(401, 'unauthorized'));
    revoked.release();
    await evidence.send('scope', revoked.send);
    expect(evidence.isKnownGood('scope')).toBe(false);
    expect(evidence.refusal('scope')).toBeUndefined();
    await evidence.send('scope', revoked.send);
    expect(revoked.sent).toBe(2);
  });
});
