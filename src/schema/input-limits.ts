/**
 * How long a client's scalar input may be. Each is checked where the input is first read, before
 * any work (no upstream call, no store write), and a longer value is refused naming its argument;
 * messages then repeat at most a prefix of it (echoes.ts). Each bound is the longest value the
 * REST API's contract can give or take (the spec, or the gateway's stated rule where the spec is
 * silent), so no valid input is ever refused by length.
 */
export const INPUT_LIMITS = {
  /**
   * A REST id: 1 to 128 printable ASCII characters. The spec calls ids opaque strings; the REST
   * API's are UUIDs (36).
   */
  restId: 128,
  /** An `ID` argument: a REST id, or the global id of one (base64 of "WithdrawalIntent:" and 128 characters: 196). */
  id: 200,
  /** `after`/`before`: a cursor this API issued (base64url of a version, a scope hash, an offset and a REST id: at most 203). */
  cursor: 256,
  /**
   * A subscription's `after` (or its Last-Event-ID header): an event id this API issued
   * (subscriptions/event-ids.ts), at most 100 followed records of REST ids of up to 200 bytes:
   * 28,966 characters. With the REST API's UUIDs it is at most about 4,200.
   */
  eventId: 32_768,
  /** A currency code (the spec's are USDT and TRX). */
  currencyCode: 16,
  /** A Tron address (the spec's `<tron_address>`): base58check of 25 bytes, always 34 characters. */
  tronAddress: 34,
  /** createWithdrawalIntent's `idempotencyKey`: 1 to 255 printable ASCII characters. */
  idempotencyKey: 255,
  /** A `Decimal` (a withdrawal amount, at most 18 digits, a dot and 2 decimals, is 21). */
  decimal: 64,
  /** The `label` of @defer or @stream, repeated in each payload it labels. */
  label: 64,
  /**
   * Objects and lists nested in a request's `variables` or `extensions`. No input of this schema
   * nests deeper than 3 (variables, the input object, its destination); past this the request is
   * refused before anything walks them.
   */
  variableDepth: 16,
} as const;

/**
 * Whether `value` has objects or lists nested more than `max` levels deep (a scalar is 0, `{}` is
 * 1). Iterative, so a client's 100 000 levels cost a loop, not the stack; it stops at the first
 * value past `max`.
 */
export function isNestedDeeper(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [current, depth] = next;
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
