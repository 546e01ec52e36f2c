import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { boundCommands, boundOf } from './command-bounds.ts';

/** A fleet's Redis: one server (or a Sentinel-managed master), or a Cluster. */
export type RedisClient = Redis | Cluster;

export interface HostPort {
  host: string;
  port: number;
}

export type RedisTopology =
  | { kind: 'single'; url: string }
  /** REDIS_SENTINELS + REDIS_SENTINEL_MASTER: the master the Sentinels name, followed through failovers. */
  | {
      kind: 'sentinel';
      sentinels: HostPort[];
      master: string;
      username?: string | undefined;
      password?: string | undefined;
      sentinelPassword?: string | undefined;
    }
  /** REDIS_CLUSTER_NODES: found from any of these nodes. */
  | { kind: 'cluster'; nodes: HostPort[]; username?: string | undefined; password?: string | undefined };

export interface RedisSettings {
  topology: RedisTopology;
  /** REDIS_TIMEOUT_MS: the bound of every command, in awake time (command-bounds.ts). */
  timeoutMs: number;
  /** REDIS_MIN_REPLICA_ACKS: replicas that must hold a withdrawal's claim before its POST is sent. */
  minReplicaAcks: number;
}

/** A WAIT's server-side timeout: 60 % of the command bound, so its answer comes within the bound. */
export const replicaAckTimeoutMs = (settings: Pick<RedisSettings, 'timeoutMs'>) =>
  Math.max(1, Math.floor(settings.timeoutMs * 0.6));

/** One Redis at `url`, no replica acknowledgements: for tests and tools. */
export function singleRedis(url: string, timeoutMs = 500): RedisSettings {
  return { topology: { kind: 'single', url }, timeoutMs, minReplicaAcks: 0 };
}

/** Where the fleet's shared state is, in words for the start-up log and /readyz: never an address. */
export function storeDescription(settings: RedisSettings | undefined): string {
  if (!settings) {
    return 'in process (this process only: a fleet needs REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES)';
  }
  const { topology } = settings;
  return { single: 'redis (one server)', sentinel: 'redis (sentinel)', cluster: 'redis (cluster)' }[
    topology.kind
  ];
}

/** The fleet's Redis addresses, without credentials, for the start-up log. */
export function redisAddress(settings: RedisSettings): string {
  const { topology } = settings;
  const list = (nodes: HostPort[]) =>
    nodes.map(({ host, port }) => `${host.includes(':') ? `[${host}]` : host}:${port}`).join(',');
  switch (topology.kind) {
    case 'single': {
      const url = new URL(topology.url);
      url.username = '';
      url.password = '';
      return url.href;
    }
    case 'sentinel':
      return `${topology.master} via ${list(topology.sentinels)}`;
    case 'cluster':
      return list(topology.nodes);
  }
}

/**
 * Connects to the fleet's Redis: every command bounded (command-bounds.ts), also while it waits for a
 * reconnection; reconnection forever with a capped backoff, following Sentinel failovers and Cluster
 * slots. A command the gateway stopped waiting for may still run, so every write is fenced or
 * idempotent (docs/fleet.md). Connection errors are logged, never thrown.
 */
export async function connectRedis(target: RedisSettings | string, logger: Logger): Promise<RedisClient> {
  const settings = typeof target === 'string' ? singleRedis(target) : target;
  const { topology, timeoutMs } = settings;
  const options: RedisOptions = {
    lazyConnect: true,
    // Queued while reconnecting, each bounded all the same (boundCommands, below).
    enableOfflineQueue: true,
    maxRetriesPerRequest: 1,
    autoResendUnfulfilledCommands: false,
    connectTimeout: 2_000,
    // No `commandTimeout`, and the socket's timer replaced (command-bounds.ts).
    socketTimeout: timeoutMs * 3,
    retryStrategy: (times) => Math.min(100 * times, 2_000),
    // A master demoted by a failover refuses writes: reconnect, to wherever the master is now.
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
  };
  let client: RedisClient;
  if (topology.kind === 'single') {
    client = new Redis(topology.url, options);
  } else if (topology.kind === 'sentinel') {
    client = new Redis({
      ...options,
      sentinels: topology.sentinels,
      name: topology.master,
      username: topology.username,
      password: topology.password,
      sentinelPassword: topology.sentinelPassword,
      sentinelCommandTimeout: timeoutMs,
      // Listens for the Sentinels' +switch-master, so a failover is followed at once.
      failoverDetector: true,
      sentinelRetryStrategy: (times) => Math.min(100 * times, 2_000),
    });
  } else {
    const { retryStrategy: _perNode, ...nodeOptions } = options;
    client = new Cluster(topology.nodes, {
      lazyConnect: true,
      // The Cluster's own queue (before its slots are known) has no timeout: commands fail instead.
      enableOfflineQueue: false,
      enableReadyCheck: true,
      clusterRetryStrategy: (times) => Math.min(100 * times, 2_000),
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      retryDelayOnTryAgain: 100,
      slotsRefreshTimeout: timeoutMs * 2,
      slotsRefreshInterval: 5_000,
      redisOptions: { ...nodeOptions, username: topology.username, password: topology.password },
    });
  }
  boundCommands(client, timeoutMs);
  let down = false;
  client.on('error', (error: Error) => {
    if (!down) logger.warn({ err: error.message }, 'redis unreachable; reconnecting');
    down = true;
  });
  client.on('ready', () => {
    if (down) logger.info('redis reachable again');
    down = false;
  });
  await client.connect();
  return client;
}

/** A second connection, for a subscriber or for the store's writes (a WAIT holds its connection). */
export function duplicateClient(client: RedisClient, override: Partial<RedisOptions> = {}): RedisClient {
  const duplicate =
    client instanceof Cluster
      ? client.duplicate(undefined, {
          ...(override.enableOfflineQueue !== undefined && {
            enableOfflineQueue: override.enableOfflineQueue,
          }),
          redisOptions: { ...client.options.redisOptions, ...override },
        })
      : client.duplicate(override);
  return boundCommands(duplicate, boundOf(client));
}

/** A subscriber connection: its commands (SUBSCRIBE while it reconnects) wait for it, unbounded. */
export function subscriberClient(client: RedisClient): RedisClient {
  const options = { enableOfflineQueue: true };
  const duplicate =
    client instanceof Cluster
      ? client.duplicate(undefined, {
          ...options,
          redisOptions: { ...client.options.redisOptions, ...options },
        })
      : client.duplicate(options);
  return boundCommands(duplicate, null);
}

export function refreshSlots(client: RedisClient): void {
  if (client instanceof Cluster) client.refreshSlotsCache();
}

export function mastersOf(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes('master') : [client];
}

/** Warns unless every master's `maxmemory-policy` is `noeviction` (docs/fleet.md); silent without CONFIG. */
export async function warnIfRedisEvicts(client: RedisClient, logger: Logger): Promise<void> {
  for (const master of mastersOf(client)) {
    const reply = (await master.config('GET', 'maxmemory-policy').catch(() => null)) as string[] | null;
    const policy = reply?.[1];
    if (policy && policy !== 'noeviction') {
      logger.warn(
        { maxmemoryPolicy: policy },
        'redis may evict idempotency records under memory pressure; set maxmemory-policy noeviction',
      );
      return;
    }
  }
}

/** Warns when a master has fewer replicas online than REDIS_MIN_REPLICA_ACKS (withdrawals refused). */
export async function warnIfTooFewReplicas(
  client: RedisClient,
  minReplicaAcks: number,
  logger: Logger,
): Promise<void> {
  if (minReplicaAcks === 0) return;
  for (const master of mastersOf(client)) {
    const info = await master.info('replication').catch(() => '');
    const online = info.split('state=online').length - 1;
    if (online < minReplicaAcks) {
      logger.warn(
        { master: `${master.options.host}:${master.options.port}`, replicasOnline: online, minReplicaAcks },
        'redis has fewer replicas online than REDIS_MIN_REPLICA_ACKS: withdrawals will be refused unsent until they are back',
      );
    }
  }
}
