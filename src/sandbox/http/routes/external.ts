import { createHash } from 'node:crypto';
import { canonicalJson } from '../../../shared/canonical-json.ts';
import { ApiError, dataInvalid, unauthorized } from '../../errors.ts';
import { Money } from '../../money.ts';
import { presentDeposit, presentWallet, presentWithdrawal } from '../../present.ts';
import { DEPOSIT_STATUSES, WITHDRAWAL_STATUSES } from '../../store/records.ts';
import type { SandboxStore } from '../../store/store.ts';
import {
  createWithdrawalBody,
  type ListQuery,
  parseBody,
  parseListQuery,
  parsePathId,
} from '../../validate.ts';
import {
  errorBody,
  headerValue,
  ID_SEGMENT,
  ok,
  paging,
  Reply,
  type RequestContext,
  type Route,
  readBody,
  requireJson,
} from '../router.ts';

/**
 * The spec's /external/v1 routes. Authentication (and the read-only key's 403 on POST) happens
 * before any of these runs: every handler reads the caller's merchant from the context.
 */
/**
 * `idempotencyExtension`: whether POST honours Idempotency-Key (the spec does not promise it; off,
 * the sandbox is a REST API that does not deduplicate, and the gateway's own guarantee is what
 * keeps one intent per key).
 */
export function externalRoutes(
  store: SandboxStore,
  options: { idempotencyExtension: () => boolean },
): Route[] {
  return [
    ...resourceRoutes('wallets', undefined, {
      list: (merchantId, query) => store.listWallets(merchantId, query.page, query.size),
      get: (merchantId, id) => store.getWallet(merchantId, id),
      present: presentWallet,
    }),
    ...resourceRoutes('deposits', DEPOSIT_STATUSES, {
      list: (merchantId, query) => store.listDeposits(merchantId, query.page, query.size, query.statuses),
      get: (merchantId, id) => store.getDeposit(merchantId, id),
      present: presentDeposit,
    }),
    ...resourceRoutes('withdrawal-intents', WITHDRAWAL_STATUSES, {
      list: (merchantId, query) => store.listWithdrawals(merchantId, query.page, query.size, query.statuses),
      get: (merchantId, id) => store.getWithdrawal(merchantId, id),
      present: presentWithdrawal,
    }),
    {
      method: 'POST',
      pattern: /^\/external\/v1\/withdrawal-intents$/,
      handler: (ctx) => createWithdrawal(store, ctx, options.idempotencyExtension()),
    },
  ];
}

/**
 * GET /external/v1/{path} (a page, filtered by `statusIn` where `statuses` are given) and
 * GET /external/v1/{path}/{id} (one resource, 404 for another merchant's).
 */
function resourceRoutes<T>(
  path: string,
  statuses: readonly string[] | undefined,
  resource: {
    list(merchantId: string, query: ListQuery): { items: T[]; totalCount: number };
    get(merchantId: string, id: string): T;
    present(record: T): unknown;
  },
): Route[] {
  return [
    {
      method: 'GET',
      pattern: new RegExp(`^/external/v1/${path}$`),
      handler: (ctx) => {
        const query = parseListQuery(ctx.url.searchParams, statuses);
        const { items, totalCount } = resource.list(merchantOf(ctx), query);
        return ok(items.map(resource.present), paging(query, items.length, totalCount));
      },
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/external/v1/${path}/${ID_SEGMENT}$`),
      handler: (ctx, [id]) => ok(resource.present(resource.get(merchantOf(ctx), parsePathId(id ?? '')))),
    },
  ];
}

/**
 * The Idempotency-Key header's contract in this extension of the spec. The gateway checks its own
 * `idempotencyKey` input separately and on purpose: each half states what it accepts.
 */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * POST /external/v1/withdrawal-intents. With an Idempotency-Key, the first answer (success or
 * 4xx) is stored for 24 h and replayed for the same merchant, key and body. Everything from the
 * replay lookup to storing the answer runs synchronously once the body is read, so concurrent
 * duplicates cannot both create an intent.
 */
async function createWithdrawal(
  store: SandboxStore,
  ctx: RequestContext,
  honourKey: boolean,
): Promise<Reply> {
  const { req } = ctx;
  const merchantId = merchantOf(ctx);
  const text = await readBody(req);
  const idempotencyKey = honourKey ? headerValue(req, 'idempotency-key') : undefined;
  if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
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
  const fingerprint = createHash('sha256')
    .update(parseError ? text : canonicalJson(body))
    .digest('hex');
  if (idempotencyKey !== undefined) {
    const replay = store.replay(merchantId, idempotencyKey, fingerprint);
    if (replay) return new Reply(replay.status, replay.body, { 'idempotent-replayed': 'true' });
  }
  let reply: Reply;
  try {
    if (parseError) throw parseError;
    const input = parseBody(createWithdrawalBody, body);
    const intent = store.createWithdrawal(merchantId, { ...input, amount: new Money(input.amount) });
    reply = new Reply(201, ok(presentWithdrawal(intent)));
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    reply = new Reply(error.status, errorBody(error));
  }
  if (idempotencyKey !== undefined) {
    store.remember(merchantId, idempotencyKey, fingerprint, reply.status, reply.body);
  }
  return reply;
}

function merchantOf(ctx: RequestContext): string {
  if (ctx.merchantId === undefined) throw unauthorized();
  return ctx.merchantId;
}
