import { USER_ERRORS, type UserErrorCode, type UserErrorRow } from '../errors/error-codes.ts';

/**
 * The typed results of createWithdrawalIntent's business failures: one class per row of
 * USER_ERRORS (errors/error-codes.ts, the one table of them), and the general member for a code
 * this release has no row for.
 */

/** A business failure. `code` is the REST API's code verbatim (e.g. `withdrawal_intent.balance_insufficient`). */
export abstract class WithdrawalUserError extends Error {
  abstract readonly code: string;
}

/**
 * A refusal whose code this release does not know, replayed from a key's record that a newer
 * release kept (docs/upgrading.md: adding a REST error code or a user error type): the REST code
 * and message as they were, as the general member of the payload union, never an internal error.
 * A first answer with an unknown code is not kept (its key is forgotten), so only a replay gives it.
 */
export class WithdrawalRefusedError extends WithdrawalUserError {
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.name = 'WithdrawalRefusedError';
    this.code = code;
  }
}

/** data_invalid, with the path of the offending input field when it is known. */
export class DataInvalidError extends WithdrawalUserError {
  readonly code = 'data_invalid';
  /** Path of the offending input field, e.g. ["input", "amount"]; null when the REST API did not say. */
  readonly field: string[] | null;

  constructor(message: string, field: string[] | null = null) {
    super(message);
    this.name = 'DataInvalidError';
    this.field = field;
  }
}

export type UserErrorClass = new (message: string) => WithdrawalUserError;

/**
 * One class per row: the errors plugin matches a thrown error to its union member by class
 * (`instanceof`), so each member needs its own.
 */
function defineClass(row: UserErrorRow): UserErrorClass {
  const named = {
    [row.type]: class extends WithdrawalUserError {
      readonly code = row.code;
      constructor(message: string) {
        super(message);
        this.name = row.type;
      }
    },
  };
  return named[row.type] as UserErrorClass;
}

const CLASSES = new Map<string, UserErrorClass>(
  USER_ERRORS.map((row) => [row.code, row.code === 'data_invalid' ? DataInvalidError : defineClass(row)]),
);

/** The class of a code's typed result (for the schema, and for `instanceof` in tests). */
export function userErrorClass(code: UserErrorCode): UserErrorClass {
  return CLASSES.get(code) as UserErrorClass;
}

/** A typed result of a known code. */
export function userError(code: UserErrorCode, message: string): WithdrawalUserError {
  return new (userErrorClass(code))(message);
}

/** The typed mutation result for a REST business error code, or null for any other code. */
export function withdrawalUserError(
  code: string | null | undefined,
  message: string,
): WithdrawalUserError | null {
  const ErrorClass = code ? CLASSES.get(code) : undefined;
  return ErrorClass ? new ErrorClass(message) : null;
}

/** The typed result a key's refused record replays: the refusal as it was first answered. */
export function replayedUserError(refusal: {
  code: string;
  message: string;
  field?: string[] | null;
}): WithdrawalUserError {
  if (refusal.code === 'data_invalid') return new DataInvalidError(refusal.message, refusal.field ?? null);
  return (
    withdrawalUserError(refusal.code, refusal.message) ??
    new WithdrawalRefusedError(refusal.code, refusal.message)
  );
}

/** What a refused record keeps of a refusal beyond its code and message. */
export function refusalDetails(refusal: WithdrawalUserError): { field?: string[] | null } {
  return refusal instanceof DataInvalidError ? { field: refusal.field } : {};
}
