import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real redis-server for the tests (Debian's `redis-server` package), on a free loopback port, in
 * a temporary directory, with persistence off. No mock stands in for Redis. When the binary is
 * missing, this installs it (`apt-get install -y redis-server`, as root), so `npm ci && npm test`
 * passes on a fresh machine; without root it fails with the command to run.
 */

let installed = false;

function findRedisServer(): string | null {
  for (const path of ['/usr/bin/redis-server', '/usr/local/bin/redis-server']) {
    try {
      execFileSync(path, ['--version'], { stdio: 'ignore' });
      return path;
    } catch {}
  }
  return null;
}

export function ensureRedisServer(): string {
  const found = findRedisServer();
  if (found) return found;
  if (installed) throw new Error('redis-server was installed but cannot be run');
  if (process.getuid?.() !== 0) {
    throw new Error(
      'The tests need redis-server and cannot install it without root. Run: sudo apt-get install -y redis-server',
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['install', '-y', '-q', 'redis-server'], { stdio: 'ignore', env });
  } catch {
    // A fresh machine may not have the package lists yet.
    execFileSync('apt-get', ['update', '-q'], { stdio: 'ignore', env });
    execFileSync('apt-get', ['install', '-y', '-q', 'redis-server'], { stdio: 'ignore', env });
  }
  installed = true;
  const path = findRedisServer();
  if (!path) throw new Error('apt-get installed redis-server, but it is not on the expected path');
  return path;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface RunningRedis {
  url: string;
  port: number;
  /** Stops the server (SIGTERM), waiting for it to exit. The port stays this instance's. */
  stop(): Promise<void>;
  /** Starts it again on the same port (after stop), as a Redis that came back. */
  start(): Promise<void>;
  /** Stops it for good and removes its directory. */
  close(): Promise<void>;
}

export async function startRedis(): Promise<RunningRedis> {
  const binary = ensureRedisServer();
  const dir = mkdtempSync(join(tmpdir(), 'gateway-redis-'));
  const port = await freePort();
  let child: ChildProcess | null = null;

  const start = async () => {
    const started = spawn(
      binary,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = started;
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) resolve();
      };
      started.stdout?.on('data', onData);
      started.stderr?.on('data', onData);
      started.once('exit', (code) => reject(new Error(`redis-server exited with ${code}:\n${output}`)));
    });
  };

  const stop = async () => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    await exited;
  };

  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop,
    start,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
