import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { boundCommands, boundOf } from './command-bounds.ts';

/** A fleet's Redis: one server (or a Sentinel-managed master), or a Cluster. Both speak the commands the gateway uses. */
export type RedisClient = Redis | Cluster;

export interface HostPort {
  host: string;
  port: number;
}

/** Where the fleet's Redis is, as configured by name (config.ts): exactly one of three topologies. */
export type RedisTopology =
  /** REDIS_URL: one server; nothing survives its loss but what it persisted. */
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
  /** REDIS_CLUSTER_NODES: a Redis Cluster, found from any of these nodes. */
  | { kind: 'cluster'; nodes: HostPort[]; username?: string | undefined; password?: string | undefined };

export interface RedisSettings {
  topology: RedisTopology;
  /**
   * REDIS_TIMEOUT_MS: the longest the gateway waits for any one Redis command, in time its event
   * loop ran (3 × in all while it stalls: command-bounds.ts). Past it the command
   * fails, and the request takes its degraded path (docs: fleet and Redis). A WAIT for replicas is
   * given less than this, so that its own answer arrives in time.
   */
  timeoutMs: number;
  /** REDIS_MIN_REPLICA_ACKS: replicas that must hold a withdrawal's claim before its POST is sent. */
  minReplicaAcks: number;
}

/**
 * How long a WAIT for replica acknowledgements may take on the server: 60 % of the command bound,
 * so its answer (0 replicas) still arrives before the command times out on a busy machine.
 */
export const replicaAckTimeoutMs = (settings: Pick<RedisSettings, 'timeoutMs'>) =>
  Math.max(1, Math.floor(settings.timeoutMs * 0.6));

/** A single Redis at `url` with the default bound and no replica acknowledgements: for tests and tools. */
export function singleRedis(url: string, timeoutMs = 500): RedisSettings {
  return { topology: { kind: 'single', url }, timeoutMs, minReplicaAcks: 0 };
}

/**
 * Where the gateway keeps what a fleet must share (idempotency keys, submissions, leases, notices,
 * rate limits), in words for the start-up log and /readyz: in this process, or which Redis
 * topology. Never an address: /readyz answers anyone who can reach the gateway's port.
 */
export function storeDescription(settings: RedisSettings | undefined): string {
  if (!settings) {
    return 'in process (this process only: a fleet needs REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES)';
  }
  const { topology } = settings;
  return { single: 'redis (one server)', sentinel: 'redis (sentinel)', cluster: 'redis (cluster)' }[
    topology.kind
  ];
}

/** Where the fleet's Redis is, for the start-up log: its addresses, without credentials. */
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
 * Connects to the fleet's Redis. Every command is bounded (REDIS_TIMEOUT_MS of the event loop's
 * awake time, command-bounds.ts), also while it waits for a reconnection (so a failover's reconnection, a fraction of a second, is
 * ridden out rather than failed). A command the gateway stopped waiting for may still run: Redis
 * works through its backlog when it resumes, and ioredis sends its offline queue, timed-out
 * commands included, once it reconnects. So every write is fenced or idempotent, and what a
 * refused withdrawal may have written is freed once Redis answers (WithdrawalService). A
 * connection that gets no answer for 3 × REDIS_TIMEOUT_MS after a command (a peer gone silent, a
 * proxy that stopped forwarding) is destroyed and made again. The client reconnects by itself,
 * forever, with a capped backoff; with Sentinel it asks the Sentinels where the master is on
 * every reconnection and as soon as they announce a failover; a Cluster refreshes its slots every
 * 5 s and when a master stops answering. Once a command goes unanswered, RedisHealth refuses the
 * next ones at once. Connection errors are logged, never thrown into the process.
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
    // No `commandTimeout`, and the socket's timer replaced: both are plain timers, which a stalled
    // event loop makes fire before the answer waiting in the socket is read (command-bounds.ts).
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

/**
 * A second connection to the same Redis, for work that must not share the first one: a
 * subscriber (a connection in subscribe mode runs nothing else) or the idempotency store's writes
 * (a WAIT holds its connection until the replicas answer).
 */
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

/**
 * A subscriber connection: like `duplicateClient`, but its commands (SUBSCRIBE while it
 * reconnects, above all) wait for the connection instead of timing out, so a channel subscribed
 * while Redis is away is subscribed once it is back; the subscriber's liveness is judged by a
 * PING with a timeout of its own (fleetEvents).
 */
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

/** Asks a Cluster to read its slots again (a master stopped answering, or a MOVED came back). */
export function refreshSlots(client: RedisClient): void {
  if (client instanceof Cluster) client.refreshSlotsCache();
}

/** Every master of the client (one, or each of a Cluster's), for what must be asked of each. */
export function mastersOf(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes('master') : [client];
}

/**
 * Warns when Redis may evict keys: every key the gateway writes has a TTL, so any policy but
 * `noeviction` could drop an idempotency record or a claim under memory pressure, and one key could
 * then make two withdrawals. With `noeviction` a full Redis refuses the write instead, and the
 * withdrawal is refused unsent. Managed Redis services may refuse CONFIG; then nothing is said.
 */
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

/**
 * Warns when a master has fewer replicas online than REDIS_MIN_REPLICA_ACKS asks for: every
 * keyed withdrawal would then be refused unsent (REPLICA_UNACKNOWLEDGED) until they are back.
 */
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
