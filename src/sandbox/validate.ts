import { z } from 'zod';
import { badRequest, dataInvalid } from './errors.ts';
import { Money, parseMoney } from './money.ts';
import { DEPOSIT_STATUSES, WITHDRAWAL_STATUSES } from './store/records.ts';

/** Request validation: zod schemas for bodies, hand-checked query strings. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isResourceId(value: string): boolean {
  return UUID.test(value);
}

/** Path ids: malformed gives 400 bad_request, so only well-formed ids can become 404s. */
export function parsePathId(value: string, name = 'id'): string {
  if (!isResourceId(value)) {
    throw badRequest(`${name} must be a lowercase UUID; received "${truncate(value)}"`);
  }
  return value;
}

const WITHDRAWAL_AMOUNT = /^(?:0|[1-9]\d{0,17})(?:\.\d{1,2})?$/;

const positiveAmount = z
  .string({ error: 'must be a decimal string' })
  .refine((v) => WITHDRAWAL_AMOUNT.test(v) && new Money(v).gt(0), {
    error: (issue) =>
      `must be a positive decimal string with at most 2 decimal places; received ${JSON.stringify(issue.input)}`,
  });

export const createWithdrawalBody = z.strictObject({
  senderWalletId: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }),
  serviceFeeMode: z.enum(['inclusive', 'exclusive'], { error: 'must be inclusive or exclusive' }),
  currencyCode: z.literal('USDT', { error: 'must be USDT (the only currency allowed)' }),
  amount: positiveAmount,
  destination: z.strictObject(
    {
      type: z.literal('crypto', { error: 'must be crypto (the only type allowed)' }),
      rail: z.literal('tron', { error: 'must be tron (the only rail allowed)' }),
      identifier: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).max(128),
    },
    { error: 'must be an object' },
  ),
});

const decimalString = z
  .string({ error: 'must be a decimal string' })
  .refine((v) => parseMoney(v) !== null, { error: 'must be a non-negative decimal string' });

const currencyCode = z.string().regex(/^[A-Z]{2,10}$/, { error: 'must be an upper-case currency code' });

export const createMerchantBody = z.strictObject({
  name: z.string().min(1).max(200),
  withdrawalConfig: z
    .strictObject({ fee: decimalString, dailyLimit: decimalString, monthlyLimit: decimalString })
    .nullable()
    .default(null),
});

export const createApiKeyBody = z.strictObject({
  name: z.string().min(1).max(200),
  access: z.enum(['read_write', 'read_only']).default('read_write'),
});

export const createWalletBody = z.strictObject({
  balances: z.record(currencyCode, decimalString).default({ USDT: '0', TRX: '0' }),
});

export const createDepositBody = z.strictObject({
  currencyCode: currencyCode.default('USDT'),
  amount: decimalString,
  amountFee: decimalString.default('0'),
  status: z.enum(DEPOSIT_STATUSES).default('completed'),
  fromAddress: z.string().min(1).max(128).optional(),
});

export const depositTransitionBody = z.strictObject({ status: z.enum(DEPOSIT_STATUSES) });
export const withdrawalTransitionBody = z.strictObject({ status: z.enum(WITHDRAWAL_STATUSES) });

const faultFields = z.strictObject({
  method: z
    .string()
    .transform((m) => m.toUpperCase())
    .optional(),
  path: z.string().startsWith('/external/', { error: 'must start with /external/' }),
  latencyMs: z.number().int().min(0).max(600_000).default(0),
  status: z.number().int().min(100).max(599).optional(),
  body: z
    .string()
    .max(8 * 1024 * 1024)
    .optional(),
  headers: z.record(z.string(), z.string()).default({}),
  reset: z.boolean().default(false),
  hang: z.boolean().default(false),
  /** Declare the full Content-Length, send half the body, then cut the connection. */
  truncate: z.boolean().default(false),
  /** Process the request normally, then wait this long before answering (the work is done either way). */
  respondAfterMs: z.number().int().min(0).max(600_000).optional(),
  /** Send the body one byte every dripMs milliseconds. */
  dripMs: z.number().int().min(1).max(60_000).optional(),
  /** Match only requests whose X-Request-Id header is exactly this (the gateway's id charset). */
  requestId: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,128}$/, { error: 'must be 1-128 characters of A-Z a-z 0-9 . _ : -' })
    .optional(),
  /** Run the route (a POST creates its intent), then destroy the socket instead of answering. */
  resetAfterRoute: z.boolean().default(false),
  times: z.number().int().positive().nullable().default(null),
});

/** Fields that answer (or drop) the request before its route runs, so resetAfterRoute cannot follow. */
const ANSWER_BEFORE_ROUTE = ['reset', 'hang', 'status', 'truncate', 'dripMs'] as const;

export const faultBody = faultFields.superRefine((fault, ctx) => {
  if (!fault.resetAfterRoute) return;
  const conflicting = ANSWER_BEFORE_ROUTE.filter(
    (name) => fault[name] !== undefined && fault[name] !== false,
  );
  if (conflicting.length === 0) return;
  ctx.addIssue({
    code: 'custom',
    path: ['resetAfterRoute'],
    input: fault.resetAfterRoute,
    message: `cannot be combined with ${conflicting.join(', ')} (they answer before the route runs)`,
  });
});
export type FaultInput = z.infer<typeof faultBody>;

/** Parses a body against a schema; every problem becomes one data_invalid naming the fields. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(body, { reportInput: true });
  if (result.success) return result.data;
  throw dataInvalid(describeIssues(result.error.issues));
}

function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .slice(0, 5)
    .map((issue) => {
      const path = issue.path.join('.');
      if (issue.code === 'unrecognized_keys') {
        const prefix = path ? `${path}.` : '';
        return `unknown field ${issue.keys.map((k) => `${prefix}${k}`).join(', ')}`;
      }
      if (path && issue.input === undefined) return `${path} is required`;
      if (!path)
        return `request body ${issue.message === 'Invalid input' ? 'must be a JSON object' : issue.message}`;
      return `${path} ${issue.message}`;
    })
    .join('; ');
}

export interface ListQuery {
  page: number;
  size: number;
  statuses?: ReadonlySet<string>;
}

/**
 * page/size/statusIn of the list endpoints. page and size are positive integers, size at most
 * 1000; statusIn is comma-separated values from `allowedStatuses`. Any other parameter, and a
 * repeated one, is a 400 bad_request.
 */
export function parseListQuery(params: URLSearchParams, allowedStatuses?: readonly string[]): ListQuery {
  const allowed = new Set(['page', 'size', ...(allowedStatuses ? ['statusIn'] : [])]);
  for (const name of new Set(params.keys())) {
    if (!allowed.has(name)) {
      throw badRequest(`unknown query parameter "${truncate(name)}"; allowed: ${[...allowed].join(', ')}`);
    }
    if (params.getAll(name).length > 1) throw badRequest(`query parameter ${name} must be given once`);
  }
  const page = positiveInteger(params.get('page'), 'page', 1);
  const size = positiveInteger(params.get('size'), 'size', 10);
  if (size > 1000) throw badRequest(`size must be at most 1000; received ${size}`);
  const statusIn = params.get('statusIn');
  if (statusIn === null || !allowedStatuses) return { page, size };
  const values = statusIn.split(',');
  const invalid = values.filter((v) => !allowedStatuses.includes(v));
  if (invalid.length) {
    throw badRequest(
      `statusIn must be a comma-separated list of: ${allowedStatuses.join(', ')}; received "${truncate(statusIn)}"`,
    );
  }
  return { page, size, statuses: new Set(values) };
}

function positiveInteger(value: string | null, name: string, fallback: number): number {
  if (value === null) return fallback;
  if (!/^[1-9]\d{0,8}$/.test(value)) {
    throw badRequest(`${name} must be a positive integer; received "${truncate(value)}"`);
  }
  return Number(value);
}

function truncate(value: string): string {
  return value.length > 64 ? `${value.slice(0, 64)}…` : value;
}
