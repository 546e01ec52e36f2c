import { parseArgs } from 'node:util';
import { DEFAULT_WORLD, type WorldSize } from './seed.ts';

/**
 * The sandbox's configuration: command-line options and environment, parsed once, every problem
 * listed. The only sandbox file that reads process.env (the gateway has its own, src/config.ts).
 *
 *   npm run sandbox -- --port 8080 --auto-advance --deposits 100000
 *
 * --port (or PORT; default 8080), --host (default 127.0.0.1), --auto-advance[=ms] (off unless
 * given; 3000 ms without a value), --wallets/--deposits/--withdrawals (size of the first merchant's
 * history), --latency (ms added to every /external request), --idempotency-extension on|off (whether
 * POST honours Idempotency-Key; default on). SANDBOX_ADMIN_TOKEN guards the admin
 * API; LOG_LEVEL sets the log level.
 */

/** The admin token's documented development default; the embedded sandbox uses it too. */
export const DEFAULT_ADMIN_TOKEN = 'sandbox-admin-token';
/** --auto-advance given without a value. */
export const DEFAULT_AUTO_ADVANCE_MS = 3_000;

export interface SandboxConfig {
  port: number;
  host: string;
  /** 0: statuses move only through the admin API. */
  autoAdvanceMs: number;
  world: WorldSize;
  latencyMs: number;
  /** Whether POST honours Idempotency-Key (`--idempotency-extension off` turns it off). */
  idempotencyExtension: boolean;
  adminToken: string;
  logLevel: string;
}

export class SandboxConfigError extends Error {
  constructor(message: string) {
    super(`Invalid sandbox options: ${message}`);
    this.name = 'SandboxConfigError';
  }
}

export function parseSandboxConfig(argv: string[], env: Record<string, string | undefined>): SandboxConfig {
  let values: ReturnType<typeof parse>['values'];
  try {
    values = parse(argv).values;
  } catch (error) {
    throw new SandboxConfigError((error as Error).message);
  }
  const problems: string[] = [];
  const integer = (name: string, raw: string | undefined, fallback: number, min = 0): number => {
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value < min) {
      problems.push(`${name} must be an integer >= ${min}; received "${raw}"`);
      return fallback;
    }
    return value;
  };
  const autoAdvance = values['auto-advance'];
  const config: SandboxConfig = {
    port: integer('--port', values.port ?? env.PORT, 8080),
    host: values.host,
    autoAdvanceMs:
      autoAdvance === undefined
        ? 0
        : integer('--auto-advance', autoAdvance || undefined, DEFAULT_AUTO_ADVANCE_MS, 1),
    world: {
      wallets: integer('--wallets', values.wallets, DEFAULT_WORLD.wallets, 1),
      deposits: integer('--deposits', values.deposits, DEFAULT_WORLD.deposits),
      withdrawals: integer('--withdrawals', values.withdrawals, DEFAULT_WORLD.withdrawals),
    },
    latencyMs: integer('--latency', values.latency, 0),
    idempotencyExtension: values['idempotency-extension'] !== 'off',
    adminToken: env.SANDBOX_ADMIN_TOKEN || DEFAULT_ADMIN_TOKEN,
    logLevel: env.LOG_LEVEL || 'info',
  };
  if (!['on', 'off', undefined].includes(values['idempotency-extension'])) {
    problems.push(`--idempotency-extension must be on or off; received "${values['idempotency-extension']}"`);
  }
  if (problems.length) throw new SandboxConfigError(`\n  - ${problems.join('\n  - ')}`);
  return config;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      'auto-advance': { type: 'string' },
      wallets: { type: 'string' },
      deposits: { type: 'string' },
      withdrawals: { type: 'string' },
      latency: { type: 'string' },
      'idempotency-extension': { type: 'string' },
    },
    allowNegative: false,
    strict: true,
  });
}

export function loadSandboxConfig(): SandboxConfig {
  return parseSandboxConfig(process.argv.slice(2), process.env);
}
