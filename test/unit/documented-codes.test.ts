import { expect, it } from 'vitest';
import { DOCUMENTED_CODES } from '../../src/upstream/error-mapping.ts';
import { USER_ERRORS } from '../../src/withdrawals/user-errors.ts';

// One fact, two tables: the REST codes whose message a client may see (error-mapping.ts) are the
// spec's `bad_request` and the codes createWithdrawalIntent answers as user errors. A row added to
// one table and not the other would show a REST message the schema has no type for, or hide one
// it has.
it('DOCUMENTED_CODES is bad_request and every user error’s REST code, no more', () => {
  expect([...DOCUMENTED_CODES].sort()).toEqual(['bad_request', ...USER_ERRORS.map((row) => row.code)].sort());
});
