import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { type DocumentNode, type ExecutionResult, type GraphQLSchema, getOperationAST } from 'graphql';
import type { CompiledQuery } from 'graphql-jit';
import type { Logger } from 'pino';
import { type GatewayContext, isBearer } from '../context.ts';
import type { CompiledQueries } from '../plugins/compiled-execution.ts';
import { compressOnce, negotiateCoding } from '../plugins/compression.ts';
import type { DocumentCache } from '../plugins/document-cache.ts';
import { markShared, type ResultSharing, type SharedHow } from '../plugins/query-deduplication.ts';
import { nestingError } from '../plugins/query-limits.ts';
import { consumeFor, type RateLimiter } from '../plugins/rate-limit.ts';
import { SAFE_REQUEST_ID } from '../plugins/request-id.ts';
import { markArrival, type RequestReport } from '../plugins/request-telemetry.ts';
import type { OperationCosts } from './operation-cost.ts';

/**
 * The hot path (docs/architecture.md#the-hot-path): a JSON POST of `query`, `variables` and
 * `operationName` only, from a key the REST API accepted lately, for a query whose document Yoga's
 * pipeline already parsed, validated, kept and compiled, is served straight from Node's request,
 * checked, shared, logged, counted and compressed as the pipeline would. Everything else, and every
 * answer that is not a plain success, is handed to Yoga with its body and this path's context, so
 * Yoga answers it exactly as if it had come straight there; nothing observable is produced here for
 * it. test/integration/gateway/hot-path.test.ts holds both paths to the same bytes and headers.
 */

export interface HotPathParts {
  schema: GraphQLSchema;
  graphqlEndpoint: string;
  maxRequestBytes: number;
  documents: DocumentCache;
  /** Documents that passed validation (useDocumentCache's record). */
  validated: WeakMap<DocumentNode, string>;
  compiled: CompiledQueries;
  costs: OperationCosts;
  maxCost: number;
  /** From this cost on an operation waits for a walk slot: Yoga's cost limit handles those. */
  walkCost: number;
  walksPerKey: number;
  /** Query deduplication's sharing; null: off (QUERY_DEDUPLICATION=false). */
  sharing: ResultSharing | null;
  generationScope: (context: GatewayContext) => string | null;
  onShared: (context: GatewayContext, how: SharedHow) => void;
  authorizationKnownGood: (authorization: string) => boolean;
  createContext: (authorization: string, requestId: string) => GatewayContext;
  rateLimiter: RateLimiter | null;
  scopeOf: (authorization: string) => string;
  /** Compression's smallest answer to compress; undefined: compression off. */
  compressMinBytes: number | undefined;
  report: (r: RequestReport) => void;
  /** Counts each request taken up: answered here, or handed to Yoga (metrics); none without metrics. */
  counted?: (outcome: 'served' | 'handed_over') => void;
  logger: Logger;
}

/** Yoga's handler of a Node request; the hot path hands it what it does not answer. */
type NodeHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

/** The contexts of requests the hot path built; Yoga's context factory takes them when it hands a request over. */
const handedOver = new WeakMap<object, GatewayContext>();
/** Requests handed to Yoga: never twice. */
const handing = new WeakSet<object>();

/** The context the hot path built for a Node request it handed over, if it did. */
export function handedOverContext(req: object | undefined): GatewayContext | undefined {
  return req === undefined ? undefined : handedOver.get(req);
}

const JSON_TYPES: ReadonlySet<string> = new Set(['application/json', 'application/json; charset=utf-8']);

/**
 * The response type Yoga negotiates for a JSON result, for the Accept values the hot path takes;
 * undefined for any other, which goes to Yoga.
 */
function answerTypeOf(accept: string | undefined): string | undefined {
  if (accept === undefined || accept === '*/*' || accept === 'application/json')
    return 'application/json; charset=utf-8';
  if (accept === 'application/graphql-response+json')
    return 'application/graphql-response+json; charset=utf-8';
  return undefined;
}

interface Params {
  query: string;
  variables: Record<string, unknown> | undefined;
  operationName: string | undefined;
}

/** The body's params when it has only the three the hot path serves; null otherwise. */
function paramsOf(text: string): Params | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  let query: unknown;
  let variables: unknown;
  let operationName: unknown;
  for (const name in body) {
    const value = (body as Record<string, unknown>)[name];
    if (name === 'query') query = value;
    else if (name === 'variables') variables = value;
    else if (name === 'operationName') operationName = value;
    else return null;
  }
  if (typeof query !== 'string') return null;
  if (variables === null) variables = undefined;
  if (variables !== undefined && (typeof variables !== 'object' || Array.isArray(variables))) return null;
  if (operationName === null) operationName = undefined;
  if (operationName !== undefined && typeof operationName !== 'string') return null;
  return {
    query,
    variables: variables as Record<string, unknown> | undefined,
    operationName: operationName as string | undefined,
  };
}

export function createHotPath(parts: HotPathParts, yoga: NodeHandler): NodeHandler {
  const { logger } = parts;

  /** Yoga answers it, with its body as read and, once one is built, this path's context. */
  const handOver = (
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    context?: GatewayContext,
  ): unknown => {
    // Once per request, whatever failed on the way here.
    if (handing.has(req)) return undefined;
    handing.add(req);
    parts.counted?.('handed_over');
    // @whatwg-node/server takes a request whose body was read from its `body` property.
    (req as IncomingMessage & { body?: Buffer }).body = body;
    const built = context ?? handedOver.get(req);
    if (built) {
      handedOver.set(req, built);
      // Yoga's X-Request-Id and log line then name the id this context carries.
      req.headers['x-request-id'] = built.requestId;
    } else {
      handedOver.delete(req);
    }
    return yoga(req, res);
  };

  const send = (
    req: IncomingMessage,
    res: ServerResponse,
    text: string,
    answerType: string,
    context: GatewayContext,
    started: number,
    executed: { name: string | null },
  ) => {
    const headers: Record<string, string> = { 'content-type': answerType };
    let body: string | Uint8Array = text;
    if (parts.compressMinBytes !== undefined) {
      headers.vary = 'Accept-Encoding';
      const coding = negotiateCoding(req.headers['accept-encoding'] ?? null);
      if (coding !== 'identity' && Buffer.byteLength(text) >= parts.compressMinBytes) {
        body = compressOnce(text, coding);
        headers['content-encoding'] = coding;
      }
    }
    headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
    headers['x-request-id'] = context.requestId;
    res.writeHead(200, headers);
    res.end(body);
    parts.counted?.('served');
    parts.report({
      requestId: context.requestId,
      method: 'POST',
      path: parts.graphqlEndpoint,
      status: 200,
      started,
      graphql: true,
      codes: [],
      hasData: true,
      executed: { name: executed.name, type: 'query', context },
      header: (name) => {
        const value = req.headers[name];
        return typeof value === 'string' ? value : null;
      },
    });
  };

  const serve = async (
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    authorization: string,
    answerType: string,
    started: number,
  ): Promise<unknown> => {
    const params = paramsOf(body.toString());
    if (!params) return handOver(req, res, body);
    const document = parts.documents.get(params.query);
    if (!document || !parts.validated.has(document)) return handOver(req, res, body);
    const compiled = parts.compiled.find(document, params.operationName);
    const operation = compiled && getOperationAST(document, params.operationName);
    if (!compiled || operation?.operation !== 'query') return handOver(req, res, body);
    if (nestingError(params)) return handOver(req, res, body);
    const given = req.headers['x-request-id'];
    const requestId = typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
    if (parts.rateLimiter) {
      const admitted = await consumeFor(req, parts.rateLimiter, parts.scopeOf(authorization)).then(
        () => true,
        () => false,
      );
      if (!admitted) return handOver(req, res, body);
    }
    const context = parts.createContext(authorization, requestId);
    // Kept from here: a failure below hands the request over with this context, not a new one.
    handedOver.set(req, context);
    const cost = parts.costs.costOf(
      parts.schema,
      document,
      params.operationName,
      params.variables,
      context.caller.scope,
    );
    if (cost > parts.maxCost || (cost >= parts.walkCost && parts.walksPerKey > 0))
      return handOver(req, res, body, context);
    const executed = { name: operation.name?.value ?? null };
    const scope = parts.sharing ? parts.generationScope(context) : null;
    const key =
      scope === null || !parts.sharing
        ? null
        : parts.sharing.keyOf(scope, document, params.operationName, operation, params.variables);
    if (key !== null && parts.sharing) {
      const kept = parts.sharing.kept(key);
      if (kept) {
        shared(context, 'kept');
        return send(req, res, kept.text, answerType, context, started, executed);
      }
      const pending = parts.sharing.pending(key);
      const result = pending && (await pending);
      if (result) {
        shared(context, 'in_flight');
        return send(req, res, textOf(result), answerType, context, started, executed);
      }
    }
    const execution = execute(compiled, context, params.variables);
    if (key !== null) parts.sharing?.track(key, execution);
    const result = await execution;
    if (!isPlainSuccess(result)) return handOver(req, res, body, context);
    const text = textOf(result);
    if (key !== null) parts.sharing?.keep(context, key, result, text);
    return send(req, res, text, answerType, context, started, executed);
  };

  const shared = (context: GatewayContext, how: SharedHow) => {
    markShared(context, how);
    parts.onShared(context, how);
  };

  return (req, res) => {
    const { headers } = req;
    const authorization = headers.authorization;
    const length = Number(headers['content-length']);
    const answerType = answerTypeOf(headers.accept);
    if (
      req.method !== 'POST' ||
      req.url !== parts.graphqlEndpoint ||
      answerType === undefined ||
      !JSON_TYPES.has(headers['content-type']?.toLowerCase() ?? '') ||
      headers['content-encoding'] !== undefined ||
      headers['transfer-encoding'] !== undefined ||
      headers.origin !== undefined ||
      !(length > 0 && length <= parts.maxRequestBytes) ||
      authorization === undefined ||
      !isBearer(authorization) ||
      !parts.authorizationKnownGood(authorization)
    )
      return yoga(req, res);
    const started = performance.now();
    markArrival(req, started);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => {
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      Promise.resolve()
        .then(() => serve(req, res, body, authorization, answerType, started))
        .catch((error: unknown) => {
          if (res.headersSent || handing.has(req)) {
            logger.error({ err: error }, 'hot path failed after answering');
            return;
          }
          logger.error({ err: error }, 'hot path failed; the request goes to the usual pipeline');
          return handOver(req, res, body);
        })
        // Nothing a request does may end the process: a failure here is logged, and the socket
        // closed if it was left without an answer.
        .catch((error: unknown) => {
          logger.error({ err: error }, 'hot path and pipeline both failed');
          if (!res.headersSent) res.destroy();
        });
    });
  };
}

function execute(
  compiled: CompiledQuery,
  context: GatewayContext,
  variables: Record<string, unknown> | undefined,
): Promise<ExecutionResult> {
  return Promise.resolve(compiled.query(undefined, context, variables ?? {}) as ExecutionResult);
}

function isPlainSuccess(result: ExecutionResult): boolean {
  return result.data != null && !result.errors && !result.extensions;
}

/** The text of a result: the one useEagerStringify made for it, if it did. */
function textOf(result: ExecutionResult): string {
  const { stringify } = result as { stringify?: (value: ExecutionResult) => string };
  return typeof stringify === 'function' ? stringify(result) : JSON.stringify(result);
}
