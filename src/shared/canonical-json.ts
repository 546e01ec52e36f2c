/**
 * JSON with object keys sorted, so values that differ only in key order serialise alike. Both
 * halves fingerprint withdrawal bodies with it (the gateway's idempotency store, the sandbox's
 * Idempotency-Key extension); a pure function with no rule of either half in it.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
