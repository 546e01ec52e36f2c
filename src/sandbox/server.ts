import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { ApiError, badRequest, dataInvalid, forbidden, notFound, unauthorized } from './errors.ts';
import { Money } from './money.ts';
import { presentDeposit, presentWallet, presentWithdrawal } from './present.ts';
import {
  type ApiKeyRecord,
  DEPOSIT_STATUSES,
  type Merchant,
  type SandboxStore,
  WITHDRAWAL_STATUSES,
} from './store.ts';
import {
  createApiKeyBody,
  createDepositBody,
  createMerchantBody,
  createWalletBody,
  createWithdrawalBody,
  depositTransitionBody,
  type FaultInput,
  faultBody,
  parseBody,
  parseListQuery,
  parsePathId,
  withdrawalTransitionBody,
} from './validate.ts';

/** Bodies above this are refused with 413 before they are parsed. */
const MAX_BODY_BYTES = 64 * 1024;
const MAX_LOGGED_REQUESTS = 10_000;
const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]{1,512})$/;

export const DEFAULT_ADMIN_TOKEN = 'sandbox-admin-token';

export interface SandboxOptions {
  store: SandboxStore;
  /** Guards /sandbox/v1. */
  adminToken?: string;
  logger?: Logger;
  /** Added to every /external request, to model the real API's round-trip time in benchmarks. */
  latencyMs?: number;
}

export interface Fault extends FaultInput {
  id: string;
}

/** One /external request as the sandbox saw it; tests count these to prove batching. */
export interface LoggedRequest {
  method: string;
  path: string;
  merchantId: string | null;
  status: number;
}

interface Route {
  method: string;
  pattern: RegExp;
  handler: (ctx: RequestContext, params: string[]) => unknown | Promise<unknown>;
  /** The HTTP status of a successful answer. */
  status?: number;
}

interface RequestContext {
  req: IncomingMessage;
  url: URL;
  requestId: string;
  /** Set once the API key is authenticated (external routes only). */
  merchantId?: string;
}

class Reply {
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, string>;

  constructor(status: number, body: string, headers: Record<string, string> = {}) {
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

function ok(data: unknown, paging?: object): string {
  return JSON.stringify(
    paging ? { code: 'ok', message: 'OK', paging, data } : { code: 'ok', message: 'OK', data },
  );
}

function errorBody(error: ApiError): string {
  return JSON.stringify({ code: error.code, message: error.message, data: null });
}

/** The HTTP face of the sandbox: the spec's /external/v1 API, the admin API and fault injection. */
export class Sandbox {
  readonly store: SandboxStore;
  readonly faults: Fault[] = [];
  readonly requests: LoggedRequest[] = [];
  /** Every /external request since start (the log above keeps only the latest 10,000). */
  externalRequests = 0;
  latencyMs: number;
  private readonly adminTokenHash: Buffer;
  private readonly logger: Logger | undefined;
  private readonly externalRoutes: Route[];
  private readonly adminRoutes: Route[];

  constructor(options: SandboxOptions) {
    this.store = options.store;
    this.logger = options.logger;
    this.latencyMs = options.latencyMs ?? 0;
    this.adminTokenHash = sha256(options.adminToken ?? DEFAULT_ADMIN_TOKEN);
    this.externalRoutes = this.buildExternalRoutes();
    this.adminRoutes = this.buildAdminRoutes();
  }

  /** Node's request listener. Never throws: every failure becomes an error envelope. */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => {
    this.handle(req, res).catch((error: unknown) => {
      this.logger?.error({ err: error }, 'sandbox response failed');
      res.destroy();
    });
  };

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = headerValue(req, 'x-request-id') ?? randomUUID();
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://sandbox.invalid');
    } catch {
      return send(
        res,
        new Reply(400, errorBody(badRequest('The request target is not a valid URL.'))),
        requestId,
      );
    }
    const ctx: RequestContext = { req, url, requestId };
    if (url.pathname.startsWith('/external/')) return this.handleExternal(ctx, res);
    if (url.pathname.startsWith('/sandbox/')) {
      const reply = await this.dispatch(ctx, () => {
        this.authenticateAdmin(req);
        return this.adminRoutes;
      });
      return send(res, reply, requestId);
    }
    if (url.pathname === '/healthz') return send(res, new Reply(200, ok({ status: 'ok' })), requestId);
    send(res, new Reply(404, errorBody(notFound())), requestId);
  }

  private async handleExternal(ctx: RequestContext, res: ServerResponse): Promise<void> {
    const { req, url } = ctx;
    const path = url.pathname + url.search;
    const entry: LoggedRequest = { method: req.method ?? 'GET', path, merchantId: null, status: 0 };
    this.externalRequests++;
    if (this.requests.length >= MAX_LOGGED_REQUESTS) this.requests.shift();
    this.requests.push(entry);

    // Injected delays end when the client goes away, so no timer outlives its connection.
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const wait = (ms: number) =>
      sleep(ms, undefined, { signal: gone.signal }).then(
        () => true,
        () => false,
      );
    if (this.latencyMs > 0 && !(await wait(this.latencyMs))) return;
    const fault = this.takeFault(entry.method, path);
    if (fault) {
      if (fault.latencyMs > 0 && !(await wait(fault.latencyMs))) return;
      if (fault.hang) {
        entry.status = -1;
        return;
      }
      if (fault.reset) {
        entry.status = -1;
        req.socket.destroy();
        return;
      }
      if (fault.status !== undefined) {
        entry.status = fault.status;
        const body = Buffer.from(
          fault.body ?? JSON.stringify({ code: 'fault_injected', message: 'Injected fault.', data: null }),
        );
        res.writeHead(fault.status, {
          'content-type': 'application/json',
          'content-length': body.length,
          'x-request-id': ctx.requestId,
          ...fault.headers,
        });
        if (fault.truncate) {
          res.write(body.subarray(0, Math.floor(body.length / 2)), () => req.socket.destroy());
          return;
        }
        if (fault.dripMs !== undefined) {
          for (const byte of body) {
            if (res.destroyed) return;
            res.write(Buffer.from([byte]));
            if (!(await wait(fault.dripMs))) return;
          }
          res.end();
          return;
        }
        res.end(body);
        return;
      }
    }

    const reply = await this.dispatch(ctx, () => {
      const key = this.authenticate(req);
      entry.merchantId = key.merchantId;
      ctx.merchantId = key.merchantId;
      if (req.method !== 'GET' && req.method !== 'HEAD' && key.access === 'read_only') throw forbidden();
      return this.externalRoutes;
    });
    entry.status = reply.status;
    if (fault?.respondAfterMs && !(await wait(fault.respondAfterMs))) return;
    send(res, reply, ctx.requestId);
  }

  /** Authorizes, routes and runs a handler, turning errors into envelopes. */
  private async dispatch(ctx: RequestContext, authorize: () => Route[]): Promise<Reply> {
    try {
      const routes = authorize();
      const segments = ctx.url.pathname;
      let pathMatched = false;
      for (const route of routes) {
        const match = route.pattern.exec(segments);
        if (!match) continue;
        pathMatched = true;
        if (route.method !== ctx.req.method) continue;
        const params = match.slice(1).map(decodeSegment);
        const result = await route.handler(ctx, params);
        return result instanceof Reply ? result : new Reply(route.status ?? 200, result as string);
      }
      if (pathMatched) {
        return new Reply(405, errorBody(new ApiError(405, 'method_not_allowed', 'Method not allowed.')));
      }
      throw notFound();
    } catch (error) {
      if (error instanceof ApiError) return new Reply(error.status, errorBody(error), error.headers);
      this.logger?.error({ err: error, requestId: ctx.requestId }, 'sandbox request failed');
      return new Reply(500, errorBody(new ApiError(500, 'internal_error', 'Internal error.')));
    }
  }

  private authenticate(req: IncomingMessage): ApiKeyRecord {
    const match = BEARER.exec(headerValue(req, 'authorization') ?? '');
    const key = match?.[1] && this.store.authenticate(match[1]);
    if (!key) throw unauthorized();
    return key;
  }

  private authenticateAdmin(req: IncomingMessage): void {
    const match = BEARER.exec(headerValue(req, 'authorization') ?? '');
    if (!match?.[1] || !timingSafeEqual(sha256(match[1]), this.adminTokenHash)) throw unauthorized();
  }

  private takeFault(method: string, path: string): Fault | undefined {
    const index = this.faults.findIndex(
      (f) => (f.method === undefined || f.method === method) && path.startsWith(f.path),
    );
    const fault = this.faults[index];
    if (!fault) return undefined;
    if (fault.times !== null && --fault.times === 0) this.faults.splice(index, 1);
    return fault;
  }

  private merchantOf(ctx: RequestContext): string {
    if (ctx.merchantId === undefined) throw unauthorized();
    return ctx.merchantId;
  }

  private buildExternalRoutes(): Route[] {
    const store = this.store;
    const id = '([^/]+)';
    return [
      {
        method: 'GET',
        pattern: /^\/external\/v1\/wallets$/,
        handler: (ctx) => {
          const query = parseListQuery(ctx.url.searchParams);
          const { items, totalCount } = store.listWallets(this.merchantOf(ctx), query.page, query.size);
          return ok(items.map(presentWallet), paging(query, items.length, totalCount));
        },
      },
      {
        method: 'GET',
        pattern: new RegExp(`^/external/v1/wallets/${id}$`),
        handler: (ctx, [walletId]) =>
          ok(presentWallet(store.getWallet(this.merchantOf(ctx), parsePathId(walletId ?? '')))),
      },
      {
        method: 'GET',
        pattern: /^\/external\/v1\/deposits$/,
        handler: (ctx) => {
          const query = parseListQuery(ctx.url.searchParams, DEPOSIT_STATUSES);
          const merchantId = this.merchantOf(ctx);
          const { items, totalCount } = store.listDeposits(
            merchantId,
            query.page,
            query.size,
            query.statuses,
          );
          return ok(items.map(presentDeposit), paging(query, items.length, totalCount));
        },
      },
      {
        method: 'GET',
        pattern: new RegExp(`^/external/v1/deposits/${id}$`),
        handler: (ctx, [depositId]) =>
          ok(presentDeposit(store.getDeposit(this.merchantOf(ctx), parsePathId(depositId ?? '')))),
      },
      {
        method: 'GET',
        pattern: /^\/external\/v1\/withdrawal-intents$/,
        handler: (ctx) => {
          const query = parseListQuery(ctx.url.searchParams, WITHDRAWAL_STATUSES);
          const merchantId = this.merchantOf(ctx);
          const { items, totalCount } = store.listWithdrawals(
            merchantId,
            query.page,
            query.size,
            query.statuses,
          );
          return ok(items.map(presentWithdrawal), paging(query, items.length, totalCount));
        },
      },
      {
        method: 'GET',
        pattern: new RegExp(`^/external/v1/withdrawal-intents/${id}$`),
        handler: (ctx, [intentId]) =>
          ok(presentWithdrawal(store.getWithdrawal(this.merchantOf(ctx), parsePathId(intentId ?? '')))),
      },
      {
        method: 'POST',
        pattern: /^\/external\/v1\/withdrawal-intents$/,
        handler: (ctx) => this.createWithdrawal(ctx),
      },
    ];
  }

  /**
   * POST /external/v1/withdrawal-intents. With an Idempotency-Key, the first answer (success or
   * 4xx) is stored for 24 h and replayed for the same merchant, key and body. Everything from the
   * replay lookup to storing the answer runs synchronously, so concurrent duplicates cannot both
   * create an intent.
   */
  private async createWithdrawal(ctx: RequestContext): Promise<Reply> {
    const { req } = ctx;
    const merchantId = this.merchantOf(ctx);
    const text = await readBody(req);
    const idempotencyKey = headerValue(req, 'idempotency-key');
    if (idempotencyKey !== undefined && !/^[\x21-\x7e]{1,255}$/.test(idempotencyKey)) {
      throw dataInvalid('Idempotency-Key must be 1 to 255 printable ASCII characters');
    }
    let body: unknown;
    let parseError: ApiError | undefined;
    try {
      requireJson(req);
      body = JSON.parse(text);
    } catch (error) {
      parseError = error instanceof ApiError ? error : dataInvalid('request body must be valid JSON');
    }
    const fingerprint = sha256(parseError ? text : canonicalJson(body)).toString('hex');
    if (idempotencyKey !== undefined) {
      const replay = this.store.replay(merchantId, idempotencyKey, fingerprint);
      if (replay) return new Reply(replay.status, replay.body, { 'idempotent-replayed': 'true' });
    }
    let reply: Reply;
    try {
      if (parseError) throw parseError;
      const input = parseBody(createWithdrawalBody, body);
      const intent = this.store.createWithdrawal(merchantId, { ...input, amount: new Money(input.amount) });
      reply = new Reply(201, ok(presentWithdrawal(intent)));
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      reply = new Reply(error.status, errorBody(error));
    }
    if (idempotencyKey !== undefined) {
      this.store.remember(merchantId, idempotencyKey, fingerprint, reply.status, reply.body);
    }
    return reply;
  }

  private buildAdminRoutes(): Route[] {
    const store = this.store;
    const id = '([^/]+)';
    const json = async (req: IncomingMessage) => {
      const text = await readBody(req);
      requireJson(req);
      try {
        return text === '' ? {} : (JSON.parse(text) as unknown);
      } catch {
        throw dataInvalid('request body must be valid JSON');
      }
    };
    return [
      {
        method: 'GET',
        pattern: /^\/sandbox\/v1\/merchants$/,
        handler: () => ok([...store.merchants.values()].map(presentMerchant)),
      },
      {
        method: 'POST',
        pattern: /^\/sandbox\/v1\/merchants$/,
        status: 201,
        handler: async ({ req }) => {
          const input = parseBody(createMerchantBody, await json(req));
          const config = input.withdrawalConfig && {
            fee: new Money(input.withdrawalConfig.fee),
            dailyLimit: new Money(input.withdrawalConfig.dailyLimit),
            monthlyLimit: new Money(input.withdrawalConfig.monthlyLimit),
          };
          return ok(presentMerchant(store.createMerchant(input.name, config)));
        },
      },
      {
        method: 'POST',
        pattern: new RegExp(`^/sandbox/v1/merchants/${id}/api-keys$`),
        status: 201,
        handler: async ({ req }, [merchantId]) => {
          const input = parseBody(createApiKeyBody, await json(req));
          const { record, key } = store.createApiKey(parsePathId(merchantId ?? ''), input.name, input.access);
          return ok({ ...presentKey(record), key });
        },
      },
      {
        method: 'POST',
        pattern: new RegExp(`^/sandbox/v1/api-keys/${id}/revoke$`),
        handler: ({ req }, [keyId]) => {
          requireJson(req, true);
          return ok(presentKey(store.revokeApiKey(parsePathId(keyId ?? ''))));
        },
      },
      {
        method: 'POST',
        pattern: new RegExp(`^/sandbox/v1/merchants/${id}/wallets$`),
        status: 201,
        handler: async ({ req }, [merchantId]) => {
          const input = parseBody(createWalletBody, await json(req));
          const balances = Object.fromEntries(
            Object.entries(input.balances).map(([c, v]) => [c, new Money(v)]),
          );
          return ok(presentWallet(store.createWallet(parsePathId(merchantId ?? ''), balances)));
        },
      },
      {
        method: 'POST',
        pattern: new RegExp(`^/sandbox/v1/wallets/${id}/deposits$`),
        status: 201,
        handler: async ({ req }, [walletId]) => {
          const input = parseBody(createDepositBody, await json(req));
          const deposit = store.createDeposit(parsePathId(walletId ?? ''), {
            ...input,
            amount: new Money(input.amount),
            amountFee: new Money(input.amountFee),
          });
          return ok(presentDeposit(deposit));
        },
      },
      {
        method: 'POST',
        pattern: new RegExp(`^/sandbox/v1/deposits/${id}/transition$`),
        handler: async ({ req }, [depositId]) => {
          const input = parseBody(depositTransitionBody, await json(req));
          return ok(presentDeposit(store.transitionDeposit(parsePathId(depositId ?? ''), input.status)));
        },
      },
      {
        method: 'POST',
        pattern: new RegExp(`^/sandbox/v1/withdrawal-intents/${id}/transition$`),
        handler: async ({ req }, [intentId]) => {
          const input = parseBody(withdrawalTransitionBody, await json(req));
          return ok(presentWithdrawal(store.transitionWithdrawal(parsePathId(intentId ?? ''), input.status)));
        },
      },
      { method: 'GET', pattern: /^\/sandbox\/v1\/faults$/, handler: () => ok(this.faults) },
      {
        method: 'POST',
        pattern: /^\/sandbox\/v1\/faults$/,
        status: 201,
        handler: async ({ req }) => {
          const fault: Fault = { id: randomUUID(), ...parseBody(faultBody, await json(req)) };
          this.faults.push(fault);
          return ok(fault);
        },
      },
      {
        method: 'DELETE',
        pattern: /^\/sandbox\/v1\/faults$/,
        handler: () => {
          this.faults.length = 0;
          return ok([]);
        },
      },
      { method: 'GET', pattern: /^\/sandbox\/v1\/requests$/, handler: () => ok(this.requests) },
      {
        method: 'GET',
        pattern: /^\/sandbox\/v1\/stats$/,
        handler: () => ok({ externalRequests: this.externalRequests, memoryRss: process.memoryUsage().rss }),
      },
      {
        method: 'DELETE',
        pattern: /^\/sandbox\/v1\/requests$/,
        handler: () => {
          this.requests.length = 0;
          return ok([]);
        },
      },
    ];
  }
}

function presentMerchant(merchant: Merchant) {
  const config = merchant.withdrawalConfig;
  return {
    id: merchant.id,
    name: merchant.name,
    withdrawalConfig: config && {
      fee: config.fee.toFixed(16),
      dailyLimit: config.dailyLimit.toFixed(16),
      monthlyLimit: config.monthlyLimit.toFixed(16),
    },
    createdAt: merchant.createdAt,
  };
}

function presentKey(record: ApiKeyRecord) {
  return {
    id: record.id,
    merchantId: record.merchantId,
    name: record.name,
    access: record.access,
    revokedAt: record.revokedAt,
    createdAt: record.createdAt,
  };
}

function paging(query: { page: number; size: number }, count: number, totalCount: number) {
  return {
    size: query.size,
    page: query.page,
    count,
    limit: query.size,
    totalCount,
    totalPages: Math.ceil(totalCount / query.size),
  };
}

function send(res: ServerResponse, reply: Reply, requestId: string): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(reply.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(reply.body),
    'x-request-id': requestId,
    ...reply.headers,
  });
  res.end(reply.body);
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Bodies must be declared JSON; an empty body may omit the header where `allowEmpty`. */
function requireJson(req: IncomingMessage, allowEmpty = false): void {
  const type = headerValue(req, 'content-type');
  if (type === undefined && allowEmpty) return;
  if (!type || !/^application\/json\b/i.test(type)) {
    throw dataInvalid(`Content-Type must be application/json; received ${type ? `"${type}"` : 'none'}`);
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest('The request path is not valid percent-encoding.');
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
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

function tooLarge(): ApiError {
  return new ApiError(413, 'payload_too_large', `Request bodies are limited to ${MAX_BODY_BYTES} bytes.`, {
    connection: 'close',
  });
}

/** JSON with object keys sorted, so bodies that differ only in key order share a fingerprint. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

export interface RunningSandbox {
  sandbox: Sandbox;
  server: Server;
  /** Base URL, e.g. http://127.0.0.1:40123 */
  url: string;
  close(): Promise<void>;
}

/** Starts the sandbox's HTTP server; port 0 picks a free port. */
export async function startSandbox(
  options: SandboxOptions & { port?: number; host?: string },
): Promise<RunningSandbox> {
  const sandbox = new Sandbox(options);
  const server = createServer({ keepAliveTimeout: 65_000 }, sandbox.listener);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    sandbox,
    server,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
