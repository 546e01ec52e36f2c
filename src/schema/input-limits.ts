/**
 * How long a client's scalar input may be, checked where it is first read, before any REST call or
 * store write; a longer value is refused naming its argument (messages repeat a prefix: echoes.ts).
 * No valid input is refused by length (each figure: docs/production.md, Limits and browser safety).
 */
export const INPUT_LIMITS = {
  /** A REST id: 1 to 128 printable ASCII characters. */
  restId: 128,
  /** An `ID` argument: a REST id, or the global id of one. */
  id: 200,
  /** `after`/`before`: a cursor this API issued. */
  cursor: 256,
  /** A subscription's `after` (or its Last-Event-ID header): an event id this API issued (event-ids.ts). */
  eventId: 32_768,
  /** A currency code (the spec's are USDT and TRX). */
  currencyCode: 16,
  /** A Tron address (the spec's `<tron_address>`): base58check of 25 bytes, always 34 characters. */
  tronAddress: 34,
  /** createWithdrawalIntent's `idempotencyKey`: 1 to 255 printable ASCII characters. */
  idempotencyKey: 255,
  decimal: 64,
  /** The `label` of @defer or @stream, repeated in each payload it labels. */
  label: 64,
  /** Objects and lists nested in `variables` or `extensions` (this schema's inputs nest 3): refused past. */
  variableDepth: 16,
} as const;

/**
 * Whether `value` nests objects or lists more than `max` deep (a scalar is 0, `{}` is 1). Iterative,
 * so 100 000 levels cost a loop, not the stack; stops at the first value past `max`.
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
