import { describe, expect, it } from 'vitest';
import { USER_ERRORS } from '../../src/errors/error-codes.ts';
import type { GatewayError } from '../../src/errors/errors.ts';
import { fromUpstreamStatus } from '../../src/upstream/error-mapping.ts';
import { DataInvalidError, userErrorClass, withdrawalUserError } from '../../src/withdrawals/user-errors.ts';

/** A rejected POST's typed result, as send-submission.ts derives it from the client's `rejected`. */
const toWithdrawalUserError = (error: GatewayError) =>
  withdrawalUserError(error.upstream?.code, error.message);

describe('REST status and code to GraphQL error', () => {
  it.each([
    [400, 'bad_request', 'BAD_USER_INPUT'],
    [400, 'data_invalid', 'BAD_USER_INPUT'],
    [401, 'unauthorized', 'UNAUTHENTICATED'],
    [403, 'forbidden', 'FORBIDDEN'],
    [404, 'not_found', 'NOT_FOUND'],
    [409, 'idempotency_key_reused', 'BAD_USER_INPUT'],
    [429, null, 'RATE_LIMITED'],
    [500, 'internal_error', 'UPSTREAM_ERROR'],
    [502, null, 'UPSTREAM_UNAVAILABLE'],
    [503, null, 'UPSTREAM_UNAVAILABLE'],
    [504, null, 'UPSTREAM_TIMEOUT'],
  ])('%i %s becomes %s, with extensions.upstream', (status, code, expected) => {
    const error = fromUpstreamStatus(status, code, 'spec message');
    expect(error.extensions).toEqual({ code: expected, upstream: { status, code } });
  });

  it('passes only the spec message field on, and only for 4xx', () => {
    expect(fromUpstreamStatus(400, 'bad_request', 'size must be at most 1000').message).toBe(
      'size must be at most 1000',
    );
    expect(fromUpstreamStatus(500, 'x', 'secret internals').message).toBe(
      'The REST API failed to answer the request.',
    );
    expect(fromUpstreamStatus(401, 'unauthorized', 'key abc revoked').message).toBe(
      'The API key was not accepted.',
    );
  });

  it.each<[number, string | null]>([
    [418, 'teapot'],
    [409, 'lock_held'],
    [400, 'shard_down'],
    [400, null],
  ])('withholds the message of a %i with the undocumented code %s, for the log only', (status, code) => {
    const error = fromUpstreamStatus(status, code, 'refused by db-7.internal:5432');
    expect(error.message).toBe(
      `The REST API refused the request (HTTP ${status}); its answer is logged under this request's x-request-id.`,
    );
    expect(error.extensions).toEqual({ code: 'BAD_USER_INPUT', upstream: { status, code } });
    expect(error.withheld).toEqual({ code, message: 'refused by db-7.internal:5432' });
    expect(JSON.stringify(error)).not.toContain('db-7');
  });

  it('repeats a documented message with its echoes shortened, and only a machine word as the code', () => {
    expect(
      fromUpstreamStatus(400, 'bad_request', `id is invalid; received "${'x'.repeat(500)}"`).message,
    ).toBe(`id is invalid; received "${'x'.repeat(32)}…"`);
    expect(fromUpstreamStatus(400, 'bad_request', 'm').withheld).toBeUndefined();
    expect(fromUpstreamStatus(400, 'at db-7.internal:5432', 'm').extensions.upstream).toEqual({
      status: 400,
      code: null,
    });
  });
});

describe('withdrawal business codes to typed results', () => {
  it.each(USER_ERRORS.map((row) => [row.code, row.type] as const))('%s becomes %s', (code, typeName) => {
    const typed = toWithdrawalUserError(
      fromUpstreamStatus(code === 'idempotency_key_reused' ? 409 : 400, code, 'msg'),
    );
    expect(typed).toBeInstanceOf(userErrorClass(code));
    expect(typed?.name).toBe(typeName);
    expect(typed?.code).toBe(code);
    expect(typed?.message).toBe('msg');
  });

  it('gives data_invalid the class that carries the input field', () => {
    expect(userErrorClass('data_invalid')).toBe(DataInvalidError);
  });

  it('leaves other codes as GraphQL errors', () => {
    expect(toWithdrawalUserError(fromUpstreamStatus(403, 'forbidden', null))).toBeNull();
    expect(toWithdrawalUserError(fromUpstreamStatus(400, 'bad_request', null))).toBeNull();
  });
});
