/**
 * An error the sandbox answers with its ErrorResponse envelope: `{ code, message, data: null }`.
 * `code` is the spec's machine-readable code; branch on it, never on the message.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

export const unauthorized = () => new ApiError(401, 'unauthorized', 'Unauthorized.');
export const forbidden = () => new ApiError(403, 'forbidden', 'Forbidden.');
export const notFound = () => new ApiError(404, 'not_found', 'Not found.');
export const badRequest = (message: string) => new ApiError(400, 'bad_request', message);
export const dataInvalid = (message: string) => new ApiError(400, 'data_invalid', message);
export const conflict = (code: string, message: string) => new ApiError(409, code, message);
export const withdrawalError = (code: string, message: string) =>
  new ApiError(400, `withdrawal_intent.${code}`, message);
