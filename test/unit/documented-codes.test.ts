import { expect, it } from 'vitest';
import { USER_ERRORS } from '../../src/errors/error-codes.ts';
import { fromUpstreamStatus } from '../../src/upstream/error-mapping.ts';

// The REST messages a client may see follow from USER_ERRORS (errors/error-codes.ts): a new row's
// code passes its message on with nothing else to edit. Any other code's message is withheld.
it("passes a 4xx's REST message on for bad_request and every user error's code, and for no other code", () => {
  for (const code of ['bad_request', ...USER_ERRORS.map((row) => row.code)]) {
    const error = fromUpstreamStatus(400, code, 'The amount exceeds the limit.');
    expect(error.message, code).toBe('The amount exceeds the limit.');
    expect(error.withheld, code).toBeUndefined();
  }
  for (const code of ['withdrawal_intent.unlisted', 'unauthorized_scope', 'internal_error']) {
    const error = fromUpstreamStatus(400, code, 'at db-7.internal:5432');
    expect(error.message, code).toBe(
      "The REST API refused the request (HTTP 400); its answer is logged under this request's x-request-id.",
    );
    expect(error.withheld, code).toEqual({ code, message: 'at db-7.internal:5432' });
  }
});
