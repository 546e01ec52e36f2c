import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { badRequest, forbidden, notFound, unauthorized } from '../errors.ts';
import type { ApiKeyRecord } from '../store/records.ts';
import type { SandboxStore } from '../store/store.ts';
import { Faults, injectFault } from './faults.ts';
import {
  dispatch,
  errorBody,
  headerValue,
  ok,
  Reply,
  type RequestContext,
  type Route,
  send,
} from './router.ts';
import { adminRoutes } from './routes/admin.ts';
import { externalRoutes } from './routes/external.ts';

const MAX_LOGGED_REQUESTS = 10_000;
/**
 * The REST API's own rule for a presented key. The gateway has its own for what it forwards, on
 * purpose: it must not assume the REST API's key format, and the sandbox checks what arrives.
 */
const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]{1,512})$/;

export interface SandboxOptions {
  store: SandboxStore;
  /** Guards /sandbox/v1. */
  adminToken: string;
  logger?: Logger;
  /** Added to every /external request, to model the real API's round-trip time in benchmarks. */
  latencyMs?: number;
  /** Whether POST /withdrawal-intents honours Idempotency-Key (an extension of the spec). Default: on. */
  idempotencyExtension?: boolean;
}

/** One /external request as the sandbox saw it; tests count these to prove batching. */
export interface LoggedRequest {
  method: string;
  path: string;
  merchantId: string | null;
  /** The HTTP status answered; -1 when a fault dropped or cut the connection. */
  status: number;
  /**
   * The `id` of what the request created: set when a POST's route answered 2xx with a new resource
   * (a withdrawal intent), even if a fault then delayed or dropped the answer or the client left;
   * null otherwise (other methods, errors, faults that answered first, idempotent replays).
   */
  createdId: string | null;
  /** The X-Request-Id the caller sent, or the one the sandbox made. */
  requestId: string;
  /** The W3C trace context the caller sent, as received; null without one. */
  traceparent: string | null;
}

/** The HTTP face of the sandbox: the spec's /external/v1 API, the admin API and fault injection. */
export class Sandbox {
  readonly store: SandboxStore;
  readonly faults = new Faults();
  readonly requests: LoggedRequest[] = [];
  /** Every /external request since start (the log above keeps only the latest 10,000). */
  externalRequests = 0;
  latencyMs: number;
  /** Whether POST honours Idempotency-Key; tests turn it off to model a REST API that does not. */
  idempotencyExtension: boolean;
  private readonly adminTokenHash: Buffer;
  private readonly logger: Logger | undefined;
  private readonly externalRoutes: Route[];
  private readonly adminRoutes: Route[];

  constructor(options: SandboxOptions) {
    this.store = options.store;
    this.logger = options.logger;
    this.latencyMs = options.latencyMs ?? 0;
    this.idempotencyExtension = options.idempotencyExtension ?? true;
    this.adminTokenHash = sha256(options.adminToken);
    this.externalRoutes = externalRoutes(this.store, {
      idempotencyExtension: () => this.idempotencyExtension,
    });
    this.adminRoutes = adminRoutes({
      store: this.store,
      faults: this.faults,
      requests: this.requests,
      externalRequests: () => this.externalRequests,
    });
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
      const reply = await dispatch(
        ctx,
        () => {
          this.authenticateAdmin(req);
          return this.adminRoutes;
        },
        this.logger,
      );
      return send(res, reply, requestId);
    }
    if (url.pathname === '/healthz') return send(res, new Reply(200, ok({ status: 'ok' })), requestId);
    send(res, new Reply(404, errorBody(notFound())), requestId);
  }

  private async handleExternal(ctx: RequestContext, res: ServerResponse): Promise<void> {
    const { req, url } = ctx;
    const path = url.pathname + url.search;
    const entry: LoggedRequest = {
      method: req.method ?? 'GET',
      path,
      merchantId: null,
      status: 0,
      createdId: null,
      requestId: ctx.requestId,
      traceparent: headerValue(req, 'traceparent') ?? null,
    };
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
    const fault = this.faults.take(entry.method, path, headerValue(req, 'x-request-id'));
    if (fault) {
      const outcome = await injectFault(fault, req, res, ctx.requestId, wait);
      if (outcome.handled) {
        entry.status = outcome.status;
        return;
      }
    }

    const reply = await dispatch(
      ctx,
      () => {
        const key = this.authenticate(req);
        entry.merchantId = key.merchantId;
        ctx.merchantId = key.merchantId;
        if (req.method !== 'GET' && req.method !== 'HEAD' && key.access === 'read_only') throw forbidden();
        return this.externalRoutes;
      },
      this.logger,
    );
    entry.status = fault?.resetAfterRoute ? -1 : reply.status;
    entry.createdId = entry.method === 'POST' ? createdIdOf(reply) : null;
    // The route has run (an intent may exist now); only the answer is late, or never comes.
    if (fault?.respondAfterMs && !(await wait(fault.respondAfterMs))) return;
    if (fault?.resetAfterRoute) {
      req.socket.destroy();
      return;
    }
    send(res, reply, ctx.requestId);
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
}

/** The `data.id` of a 2xx reply that made something new; null for replays and anything else. */
function createdIdOf(reply: Reply): string | null {
  if (reply.status < 200 || reply.status > 299 || reply.headers['idempotent-replayed'] === 'true')
    return null;
  try {
    const id: unknown = JSON.parse(reply.body)?.data?.id;
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
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
