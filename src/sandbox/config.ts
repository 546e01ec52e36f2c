import { parseArgs } from 'node:util';
import { DEFAULT_WORLD, type WorldSize } from './seed.ts';

/**
 * The sandbox's configuration: command-line options and environment, parsed once, every problem
 * listed. The only sandbox file that reads process.env (the gateway has its own, src/config/config.ts).
 *
 *   npm run sandbox -- --port 8080 --auto-advance --deposits 100000
 *
 * --port (or PORT; default 8080), --host (default 127.0.0.1), --auto-advance[=ms] (or
 * SANDBOX_AUTO_ADVANCE_MS: how long each deposit and intent stays in each open status; off unless
 * given, 8000 ms without a value), --deposit-every[=ms] (or SANDBOX_DEPOSIT_EVERY_MS: a new deposit
 * for the first merchant every so often; off unless given, 25000 ms without a value),
 * --wallets/--deposits/--withdrawals (size of the first merchant's history), --quiet-wallet (or
 * SANDBOX_QUIET_WALLET=true: one more wallet for the first merchant, its newest-created, whose 10
 * deposits and 3 withdrawals all lie in the oldest 1 % of the history; off unless given), --latency (ms added to
 * every /external request), --idempotency-extension on|off (whether POST honours Idempotency-Key;
 * default on). SANDBOX_ADMIN_TOKEN guards the admin
 * API; LOG_LEVEL sets the log level.
 */

/** The admin token's documented development default; the embedded sandbox uses it too. */
export const DEFAULT_ADMIN_TOKEN = 'sandbox-admin-token';
/** --auto-advance given without a value: a new intent completes in about 25 s, a deposit in 17. */
export const DEFAULT_AUTO_ADVANCE_MS = 8_000;
/** --deposit-every given without a value. */
export const DEFAULT_DEPOSIT_EVERY_MS = 25_000;

export interface SandboxConfig {
  port: number;
  host: string;
  /** Each deposit's and intent's time in each open status; 0: statuses move only through the admin API. */
  autoAdvanceMs: number;
  /** A new deposit for the first merchant every so often; 0: none. */
  depositEveryMs: number;
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
  const depositEvery = values['deposit-every'];
  const config: SandboxConfig = {
    port: integer('--port', values.port ?? env.PORT, 8080),
    host: values.host,
    // The option, bare or with a value; else the environment's value (the embedded sandbox's names); else off.
    autoAdvanceMs:
      autoAdvance === undefined
        ? integer('SANDBOX_AUTO_ADVANCE_MS', env.SANDBOX_AUTO_ADVANCE_MS, 0)
        : integer('--auto-advance', autoAdvance || undefined, DEFAULT_AUTO_ADVANCE_MS, 1),
    depositEveryMs:
      depositEvery === undefined
        ? integer('SANDBOX_DEPOSIT_EVERY_MS', env.SANDBOX_DEPOSIT_EVERY_MS, 0)
        : integer('--deposit-every', depositEvery || undefined, DEFAULT_DEPOSIT_EVERY_MS, 1),
    world: {
      wallets: integer('--wallets', values.wallets, DEFAULT_WORLD.wallets, 1),
      deposits: integer('--deposits', values.deposits, DEFAULT_WORLD.deposits),
      withdrawals: integer('--withdrawals', values.withdrawals, DEFAULT_WORLD.withdrawals),
      // Only when asked for, so that the default world's options are exactly DEFAULT_WORLD.
      ...(values['quiet-wallet'] || env.SANDBOX_QUIET_WALLET === 'true' ? { quietWallet: true } : {}),
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

/** Options whose value may be left out: `--auto-advance` alone means its default. */
const OPTIONAL_VALUE = new Set(['--auto-advance', '--deposit-every']);

function parse(argv: string[]) {
  return parseArgs({
    // parseArgs has no optional values: a bare one (last, or before another option) becomes `--x=`.
    args: argv.map((arg, i) =>
      OPTIONAL_VALUE.has(arg) && (argv[i + 1] === undefined || argv[i + 1]?.startsWith('-'))
        ? `${arg}=`
        : arg,
    ),
    options: {
      port: { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      'auto-advance': { type: 'string' },
      'deposit-every': { type: 'string' },
      wallets: { type: 'string' },
      deposits: { type: 'string' },
      withdrawals: { type: 'string' },
      'quiet-wallet': { type: 'boolean' },
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
