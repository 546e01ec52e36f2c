import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installDebianPackage } from './debian-package.ts';
import { freePort } from './process.ts';

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
  installDebianPackage('redis-server', 'The fleet tests');
  installed = true;
  const path = findRedisServer();
  if (!path) throw new Error('apt-get installed redis-server, but it is not on the expected path');
  return path;
}

/** Resolves once `child` has printed `line`; rejects with its output if it exits first. */
function printed(child: ChildProcess, line: string, name: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(line)) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}:\n${output}`)));
  });
}

export interface RunningRedis {
  url: string;
  port: number;
  /** Stops the server (SIGTERM), waiting for it to exit. The port stays this instance's. */
  stop(): Promise<void>;
  /** Starts it again on the same port (after stop), as a Redis that came back. */
  start(): Promise<void>;
  /**
   * Freezes the server (SIGSTOP), as a stalled host, a long fork or a partition would: it keeps its
   * connections and accepts new ones, and answers nothing until resume (SIGCONT).
   */
  pause(): void;
  resume(): void;
  /** Kills it at once (SIGKILL), as a crashed host, waiting for it to be gone. */
  kill(): Promise<void>;
  /** Stops it for good and removes its directory. */
  close(): Promise<void>;
}

export async function startRedis(options: { args?: string[]; port?: number } = {}): Promise<RunningRedis> {
  const binary = ensureRedisServer();
  const dir = mkdtempSync(join(tmpdir(), 'gateway-redis-'));
  const port = options.port ?? (await freePort());
  let child: ChildProcess | null = null;

  const start = async () => {
    const started = spawn(
      binary,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        ...(options.args ?? []),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = started;
    await printed(started, 'Ready to accept connections', 'redis-server');
  };

  const end = async (signal: 'SIGTERM' | 'SIGKILL') => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    // A paused server only handles its signals once it runs again.
    running.kill('SIGCONT');
    running.kill(signal);
    await exited;
  };
  const stop = () => end('SIGTERM');
  const signal = (name: 'SIGSTOP' | 'SIGCONT') => {
    if (!child) {
      if (name === 'SIGCONT') return;
      throw new Error('redis-server is not running');
    }
    child.kill(name);
  };

  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop,
    start,
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    kill: () => end('SIGKILL'),
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `redis-cli ARGS` and returns its output. */
function redisCli(args: string[]): string {
  ensureRedisServer();
  return execFileSync('redis-cli', args, { encoding: 'utf8', timeout: 30_000 });
}

/** Waits until `check` holds, trying every 100 ms, for at most `ms`. */
async function until(what: string, check: () => boolean, ms = 20_000): Promise<void> {
  const giveUpAt = Date.now() + ms;
  while (!check()) {
    if (Date.now() > giveUpAt) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface SentinelTopology {
  master: RunningRedis;
  replicas: RunningRedis[];
  /** The Sentinel's port; REDIS_SENTINELS=127.0.0.1:<port>. */
  sentinelPort: number;
  /** The name the Sentinel monitors; REDIS_SENTINEL_MASTER. */
  name: string;
  /** The port of the server the Sentinel calls master now. */
  currentMasterPort(): number;
  close(): Promise<void>;
}

/**
 * A master, `replicaCount` replicas and one Sentinel (quorum 1): the Sentinel declares the master
 * down after 1 s and promotes the replica with the most data in a few seconds, then points the
 * other replicas at it. Two replicas by default, so the new master has a replica too.
 */
export async function startSentinelTopology(replicaCount = 2, name = 'mw'): Promise<SentinelTopology> {
  const binary = ensureRedisServer();
  const master = await startRedis();
  const replicas: RunningRedis[] = [];
  for (let i = 0; i < replicaCount; i++) {
    replicas.push(await startRedis({ args: ['--replicaof', '127.0.0.1', String(master.port)] }));
  }
  await until(
    'the replicas to sync',
    () =>
      redisCli(['-p', String(master.port), 'info', 'replication']).split('state=online').length ===
      replicaCount + 1,
  );
  const dir = mkdtempSync(join(tmpdir(), 'gateway-sentinel-'));
  const sentinelPort = await freePort();
  const file = join(dir, 'sentinel.conf');
  writeFileSync(
    file,
    [
      `port ${sentinelPort}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${master.port} 1`,
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 5000`,
      '',
    ].join('\n'),
  );
  const sentinel = spawn(binary, [file, '--sentinel'], { stdio: ['ignore', 'pipe', 'pipe'] });
  await printed(sentinel, '+monitor', 'redis sentinel');
  // The Sentinel learns of the replicas from the master's INFO.
  await until('the Sentinel to know the replicas', () => {
    const known = redisCli(['-p', String(sentinelPort), 'sentinel', 'replicas', name]);
    return replicas.every((replica) => known.includes(String(replica.port)));
  });
  return {
    master,
    replicas,
    sentinelPort,
    name,
    currentMasterPort() {
      const reply = redisCli(['-p', String(sentinelPort), 'sentinel', 'get-master-addr-by-name', name]);
      return Number(reply.trim().split('\n')[1]);
    },
    async close() {
      const exited = new Promise((resolve) => sentinel.once('exit', resolve));
      if (sentinel.exitCode === null) sentinel.kill('SIGKILL');
      await exited;
      await master.close();
      for (const replica of replicas) await replica.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RedisCluster {
  /** Every node, masters first (as created; a failover may change roles). */
  nodes: RunningRedis[];
  /** REDIS_CLUSTER_NODES: host:port of every node. */
  addresses: string;
  close(): Promise<void>;
}

/**
 * A Redis Cluster of three masters, each with `replicas` replicas (`redis-cli --cluster create`),
 * waiting until every node says the cluster is ok.
 */
export async function startRedisCluster(replicas = 1): Promise<RedisCluster> {
  const nodes: RunningRedis[] = [];
  for (let i = 0; i < 3 * (1 + replicas); i++) {
    const port = await freePort();
    // The bus port is named: the default (port + 10000) may not exist for an ephemeral port.
    const busPort = await freePort();
    nodes.push(
      await startRedis({
        port,
        args: [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--cluster-port',
          String(busPort),
        ],
      }),
    );
  }
  const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
  redisCli(['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicas), '--cluster-yes']);
  await until('the cluster to be ok on every node', () =>
    nodes.every((node) =>
      redisCli(['-p', String(node.port), 'cluster', 'info']).includes('cluster_state:ok'),
    ),
  );
  if (replicas > 0) {
    await until('every replica to sync', () =>
      nodes
        .slice(0, 3)
        .every(
          (node) =>
            redisCli(['-p', String(node.port), 'info', 'replication']).split('state=online').length ===
            replicas + 1,
        ),
    );
  }
  return {
    nodes,
    addresses: addresses.join(','),
    async close() {
      for (const node of nodes) await node.close();
    },
  };
}
