import { KNOWN_VARIABLES } from './variables.ts';

/**
 * Prefixes of names only the gateway's variables use: a variable under one that the gateway does
 * not read is a misspelling, refused with the closest known name (docs/configuration.md). Every
 * variable but NODE_ENV, PORT, HOST and OTEL_* is under one (test/unit/config.test.ts checks it).
 */
export const OWNED_PREFIXES: readonly string[] = [
  'APQ_',
  'CIRCUIT_BREAKER_',
  'COMPILED_EXECUTION',
  'COMPRESSION',
  'DOCUMENT_CACHE',
  'FEDERATION',
  'GRAPHIQL',
  'HEADERS_TIMEOUT',
  'HOT_PATH',
  'IDEMPOTENCY_',
  'INTROSPECTION',
  'KEEP_ALIVE_',
  'LOG_LEVEL',
  'MAX_',
  'METRICS',
  'PERSISTED_DOCUMENTS',
  'QUERY_',
  'RATE_LIMIT',
  'REDIS_',
  'REFUSED_KEY',
  'REQUEST_DEADLINE',
  'REQUEST_TIMEOUT',
  'SANDBOX_',
  'SEND_TIMEOUT',
  'SHUTDOWN_',
  'SUBSCRIPTION',
  'UPSTREAM_',
  'WALLET_INDEX',
  'WEBSOCKET',
  'WITHDRAWAL',
  'WORKERS',
];

/** Names others set under the gateway's prefixes: Kubernetes' service links, Heroku's REDIS_TLS_URL. */
function setByOthers(name: string, value: string): boolean {
  return (
    /_SERVICE_(HOST|PORT)(_[A-Z0-9_]+)?$/.test(name) ||
    /_PORT_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?$/.test(name) ||
    (/_PORT$/.test(name) && /^(tcp|udp|sctp):\/\//.test(value)) ||
    name === 'REDIS_TLS_URL'
  );
}

/** One problem per variable under an owned prefix that the gateway does not read. */
export function unknownVariables(env: Record<string, string>): string[] {
  return Object.entries(env)
    .filter(
      ([name, value]) =>
        OWNED_PREFIXES.some((prefix) => name.startsWith(prefix)) &&
        !KNOWN_VARIABLES.includes(name) &&
        !setByOthers(name, value),
    )
    .map(([name]) => `${name} is not a variable the gateway reads; did you mean ${closestVariable(name)}?`);
}

/** The known variable fewest single-character edits away from `name` (the first of equals). */
function closestVariable(name: string): string {
  let best = { name: '', distance: Number.POSITIVE_INFINITY };
  for (const known of KNOWN_VARIABLES) {
    const distance = editDistance(name, known);
    if (distance < best.distance) best = { name: known, distance };
  }
  return best.name;
}

/** Levenshtein distance: insertions, deletions and substitutions. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
