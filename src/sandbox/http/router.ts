import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { ApiError, badRequest, dataInvalid, notFound } from '../errors.ts';

/**
 * The sandbox's HTTP plumbing: routes as (method, path pattern, handler), the spec's envelopes,
 * and the body and header helpers every route uses. No route of its own.
 */

/** Bodies above this are refused with 413 before they are parsed. */
export const MAX_BODY_BYTES = 64 * 1024;

export interface RequestContext {
  req: IncomingMessage;
  url: URL;
  requestId: string;
  /** Set once the API key is authenticated (external routes only). */
  merchantId?: string;
}

export interface Route {
  method: string;
  pattern: RegExp;
  /** Returns an `ok(...)` body (answered with `status`) or a whole Reply. */
  handler: (ctx: RequestContext, params: string[]) => unknown | Promise<unknown>;
  /** The HTTP status of a successful answer. */
  status?: number;
}

/** A path segment for route patterns: one id, percent-decoded before the handler sees it. */
export const ID_SEGMENT = '([^/]+)';

export class Reply {
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, string>;

  constructor(status: number, body: string, headers: Record<string, string> = {}) {
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

/** The spec's ApiResponse; `paging` on list responses only. */
export function ok(data: unknown, paging?: object): string {
  return JSON.stringify(
    paging ? { code: 'ok', message: 'OK', paging, data } : { code: 'ok', message: 'OK', data },
  );
}

/** The spec's ErrorResponse. */
export function errorBody(error: ApiError): string {
  return JSON.stringify({ code: error.code, message: error.message, data: null });
}

export function errorReply(error: ApiError): Reply {
  return new Reply(error.status, errorBody(error), error.headers);
}

/** The paging object of a list response. */
export function paging(query: { page: number; size: number }, count: number, totalCount: number) {
  return {
    size: query.size,
    page: query.page,
    count,
    limit: query.size,
    totalCount,
    totalPages: Math.ceil(totalCount / query.size),
  };
}

/**
 * Runs `authorize` (which returns the routes the caller may use, or throws), matches the path and
 * method, and runs the handler. Every failure becomes an error envelope: ApiErrors as themselves,
 * anything else as a logged 500. A known path with another method is 405.
 */
export async function dispatch(
  ctx: RequestContext,
  authorize: () => Route[],
  logger: Logger | undefined,
): Promise<Reply> {
  try {
    const routes = authorize();
    let pathMatched = false;
    for (const route of routes) {
      const match = route.pattern.exec(ctx.url.pathname);
      if (!match) continue;
      pathMatched = true;
      if (route.method !== ctx.req.method) continue;
      const params = match.slice(1).map(decodeSegment);
      const result = await route.handler(ctx, params);
      return result instanceof Reply ? result : new Reply(route.status ?? 200, result as string);
    }
    if (pathMatched) {
      return errorReply(new ApiError(405, 'method_not_allowed', 'Method not allowed.'));
    }
    throw notFound();
  } catch (error) {
    if (error instanceof ApiError) return errorReply(error);
    logger?.error({ err: error, requestId: ctx.requestId }, 'sandbox request failed');
    return errorReply(new ApiError(500, 'internal_error', 'Internal error.'));
  }
}

export function send(res: ServerResponse, reply: Reply, requestId: string): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(reply.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(reply.body),
    'x-request-id': requestId,
    ...reply.headers,
  });
  res.end(reply.body);
}

export function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Bodies must be declared JSON; an empty body may omit the header where `allowEmpty`. */
export function requireJson(req: IncomingMessage, allowEmpty = false): void {
  const type = headerValue(req, 'content-type');
  if (type === undefined && allowEmpty) return;
  if (!type || !/^application\/json\b/i.test(type)) {
    throw dataInvalid(`Content-Type must be application/json; received ${type ? `"${type}"` : 'none'}`);
  }
}

/** The body as text; 413 past MAX_BODY_BYTES, declared or streamed. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A JSON body (an empty one is `{}`), declared as such. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = await readBody(req);
  requireJson(req);
  try {
    return text === '' ? {} : (JSON.parse(text) as unknown);
  } catch {
    throw dataInvalid('request body must be valid JSON');
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest('The request path is not valid percent-encoding.');
  }
}

function tooLarge(): ApiError {
  return new ApiError(413, 'payload_too_large', `Request bodies are limited to ${MAX_BODY_BYTES} bytes.`, {
    connection: 'close',
  });
}
