import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installDebianPackage } from './debian-package.ts';
import { freePort } from './process.ts';

/**
 * The repository's load-balancer example, ops/haproxy/haproxy.cfg, run as it is by Debian's
 * haproxy (2.6) in front of gateway processes: the tests use the file operators are pointed to.
 * The suite's global setup installs the package when it is missing, as it does redis-server.
 *
 *   await using lb = await startHaproxy({ backends: [a.url, b.url] });
 *   await fetch(`${lb.url}/graphql`, …);
 *   await lb.waitForStates(['UP', 'UP']);
 */

const HAPROXY = '/usr/sbin/haproxy';
export const HAPROXY_CONFIG = new URL('../../ops/haproxy/haproxy.cfg', import.meta.url).pathname;

export function ensureHaproxy(): string {
  if (existsSync(HAPROXY)) return HAPROXY;
  installDebianPackage('haproxy', 'The rolling-restart tests');
  if (!existsSync(HAPROXY)) throw new Error(`apt-get installed haproxy, but ${HAPROXY} is missing`);
  return HAPROXY;
}

/** A server's state as haproxy's health checks see it (`show stat`): UP, DOWN, and the transitions between. */
export type ServerState = 'UP' | 'DOWN' | 'NOLB' | 'MAINT' | 'no check' | `UP ${string}` | `DOWN ${string}`;

export interface RunningHaproxy extends AsyncDisposable {
  /** Where clients connect, e.g. http://127.0.0.1:40123. */
  url: string;
  /** Each backend's state, in the order `backends` named them. */
  states(): Promise<ServerState[]>;
  /** Resolves once every backend is in the state given for it (at most `ms`, default 30 s). */
  waitForStates(states: ServerState[], ms?: number): Promise<void>;
  /** What haproxy logged: one line per request (status, which server, retries), and server state changes. */
  output(): string;
  /** Stops haproxy and removes its files. */
  stop(): Promise<void>;
}

/**
 * Starts haproxy with ops/haproxy/haproxy.cfg on a free loopback port, in front of `backends`
 * (gateway base URLs or host:port, as many as the file has servers: two). Its access log and an
 * admin socket (for `states`) come from a `global` section of the test's own, read before the
 * file. `redispatch: false` runs the file without its `option redispatch` line, to show what the
 * grace period does alone.
 */
export async function startHaproxy(options: {
  backends: string[];
  redispatch?: boolean;
}): Promise<RunningHaproxy> {
  const binary = ensureHaproxy();
  let config = readFileSync(HAPROXY_CONFIG, 'utf8');
  const servers = [...config.matchAll(/^\s*server (\S+) "\$\{(GATEWAY_\d+)\}"/gm)];
  if (servers.length !== options.backends.length) {
    throw new Error(
      `${HAPROXY_CONFIG} has ${servers.length} servers; startHaproxy was given ${options.backends.length} backends`,
    );
  }
  if (options.redispatch === false) {
    const without = config.replace(/^\s*option redispatch\b.*\n/m, '');
    if (without === config) throw new Error(`${HAPROXY_CONFIG} has no "option redispatch" line to leave out`);
    config = without;
  }
  const dir = mkdtempSync(join(tmpdir(), 'gateway-haproxy-'));
  const socket = join(dir, 'admin.sock');
  const ownGlobal = join(dir, 'global.cfg');
  writeFileSync(
    ownGlobal,
    `global\n    log stdout format raw local0 info\n    stats socket ${socket} mode 600 level admin\n`,
  );
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  const port = await freePort();
  const env: Record<string, string> = { HAPROXY_BIND: `127.0.0.1:${port}` };
  servers.forEach((server, i) => {
    env[server[2] as string] = hostPort(options.backends[i] as string);
  });
  const child = spawn(binary, ['-db', '-f', ownGlobal, '-f', file], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const names = servers.map((server) => server[1] as string);

  const states = async (): Promise<ServerState[]> => {
    const csv = await adminCommand(socket, 'show stat');
    const header = csv.split('\n')[0]?.replace(/^# /, '').split(',') ?? [];
    const [px, sv, status] = ['pxname', 'svname', 'status'].map((name) => header.indexOf(name));
    const rows = csv
      .split('\n')
      .slice(1)
      .map((line) => line.split(','));
    return names.map(
      (name) =>
        (rows.find((row) => row[px as number] === 'gateways' && row[sv as number] === name)?.[
          status as number
        ] ?? 'unknown') as ServerState,
    );
  };

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };

  // Ready once the admin socket answers; a bad configuration exits first.
  try {
    await waitUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`haproxy exited with ${child.exitCode}:\n${output}`);
        return (await states().catch(() => [])).length === names.length;
      },
      10_000,
      () => `haproxy did not answer on its admin socket:\n${output}`,
    );
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    url: `http://127.0.0.1:${port}`,
    states,
    async waitForStates(wanted, ms = 30_000) {
      let last: ServerState[] = [];
      await waitUntil(
        async () => {
          last = await states();
          return wanted.every((state, i) => last[i] === state);
        },
        ms,
        () => `haproxy's servers are ${JSON.stringify(last)}, not ${JSON.stringify(wanted)}, after ${ms} ms`,
      );
    },
    output: () => output,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** `http://127.0.0.1:4000` or `127.0.0.1:4000` as haproxy's `host:port`. */
function hostPort(backend: string): string {
  if (!backend.includes('://')) return backend;
  const url = new URL(backend);
  const host = url.hostname === 'localhost' ? '127.0.0.1' : url.hostname;
  return `${host}:${url.port}`;
}

/** One command on haproxy's admin socket (the runtime API); resolves with its whole answer. */
function adminCommand(path: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    let answer = '';
    socket.setTimeout(5_000, () => socket.destroy(new Error(`no answer to "${command}"`)));
    socket.on('connect', () => socket.end(`${command}\n`));
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

async function waitUntil(check: () => Promise<boolean>, ms: number, what: () => string): Promise<void> {
  const giveUpAt = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > giveUpAt) throw new Error(what());
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
