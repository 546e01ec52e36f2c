import { STATUS_CODES } from 'node:http';

const codes = new WeakMap<Request, string>();

/**
 * The JSON answer (`{"errors":[error]}`) of a plugin that ends a request before GraphQL runs; its
 * code is kept for the access log and metrics, which see no GraphQL result (refusalCodeOf).
 */
export function refusal(
  request: Request,
  status: number,
  error: { message: string; extensions: { code: string; [key: string]: unknown } },
  headers: Record<string, string> = {},
): Response {
  codes.set(request, error.extensions.code);
  return new Response(JSON.stringify({ errors: [error] }), {
    status,
    statusText: STATUS_CODES[status] ?? '',
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

/** The code of the refusal that ended this request, if one did. */
export function refusalCodeOf(request: Request): string | undefined {
  return codes.get(request);
}
