import { describe, expect, it } from 'vitest';
import { failureKind, failureOf, transportError } from '../../src/upstream/transport-errors.ts';

const undici = (code: string) => Object.assign(new Error(code), { code });

describe('what a call that got no answer means', () => {
  it.each([
    // code, metric word, GET retried, circuit failure, gateway code
    ['ECONNREFUSED', 'refused', true, true, 'UPSTREAM_UNAVAILABLE'],
    ['ECONNRESET', 'reset', true, true, 'UPSTREAM_UNAVAILABLE'],
    ['EPIPE', 'reset', true, true, 'UPSTREAM_UNAVAILABLE'],
    ['UND_ERR_SOCKET', 'reset', true, true, 'UPSTREAM_UNAVAILABLE'],
    ['UND_ERR_CLOSED', 'reset', true, true, 'UPSTREAM_UNAVAILABLE'],
    ['ENOTFOUND', 'dns', true, false, 'UPSTREAM_UNAVAILABLE'],
    ['EAI_AGAIN', 'dns', true, false, 'UPSTREAM_UNAVAILABLE'],
    ['UND_ERR_CONNECT_TIMEOUT', 'timeout', true, true, 'UPSTREAM_TIMEOUT'],
    ['UND_ERR_HEADERS_TIMEOUT', 'timeout', false, true, 'UPSTREAM_TIMEOUT'],
    ['UND_ERR_BODY_TIMEOUT', 'timeout', false, true, 'UPSTREAM_TIMEOUT'],
    ['DEADLINE', 'deadline', false, false, 'UPSTREAM_TIMEOUT'],
    ['UND_ERR_RES_EXCEEDED_MAX_SIZE', 'too_large', false, false, 'UPSTREAM_ERROR'],
    ['UND_ERR_ABORTED', 'error', false, false, 'UPSTREAM_UNAVAILABLE'],
  ] as const)('%s: %s, retried %s, circuit failure %s, %s', (code, kind, retry, circuit, gatewayCode) => {
    const error = undici(code);
    expect(failureKind(error)).toBe(kind);
    expect(failureOf(error)?.retry ?? false).toBe(retry);
    expect(failureOf(error)?.circuit ?? false).toBe(circuit);
    expect(transportError(error).code).toBe(gatewayCode);
  });

  it("reads the code of undici's cause, and the deadline's TimeoutError", () => {
    expect(failureKind(new Error('fetch failed', { cause: undici('ECONNRESET') }))).toBe('reset');
    expect(failureKind(new DOMException('request deadline passed', 'TimeoutError'))).toBe('deadline');
    expect(failureKind(new Error('no code'))).toBe('error');
  });
});
