import type { RedisSettings, RedisTopology } from '../redis/connection.ts';
import type { Rule, Variables } from './variables.ts';

/**
 * The fleet's Redis, named by exactly one of REDIS_URL, REDIS_SENTINELS (with
 * REDIS_SENTINEL_MASTER) and REDIS_CLUSTER_NODES. REDIS_RULES list what is wrong with them;
 * redisOf reads them once none is.
 */

/** The variables that name a Redis, of the three that may. */
export function namedRedis(c: Variables): string[] {
  return [
    c.REDIS_URL && 'REDIS_URL',
    c.REDIS_SENTINELS && 'REDIS_SENTINELS',
    c.REDIS_CLUSTER_NODES && 'REDIS_CLUSTER_NODES',
  ].filter((name): name is string => Boolean(name));
}

const credentials = ['REDIS_USERNAME', 'REDIS_PASSWORD'] as const;

/** Every problem with the Redis variables, in this order; each checked whatever else is invalid. */
export const REDIS_RULES: readonly Rule[] = [
  {
    when: (c) => namedRedis(c).length > 1,
    problem: (c) =>
      `${namedRedis(c).join(', ')}: set exactly one (REDIS_URL for one server, REDIS_SENTINELS for Sentinel, REDIS_CLUSTER_NODES for a Cluster)`,
  },
  {
    when: (c) => Boolean(c.REDIS_SENTINELS && !c.REDIS_SENTINEL_MASTER),
    problem: () => 'REDIS_SENTINEL_MASTER: required with REDIS_SENTINELS (the name the Sentinels monitor)',
  },
  {
    when: (c) => Boolean(c.REDIS_SENTINEL_MASTER && !c.REDIS_SENTINELS),
    problem: () => 'REDIS_SENTINEL_MASTER: only means something with REDIS_SENTINELS',
  },
  {
    when: (c) => Boolean(c.REDIS_SENTINEL_PASSWORD && !c.REDIS_SENTINELS),
    problem: () => 'REDIS_SENTINEL_PASSWORD: only means something with REDIS_SENTINELS',
  },
  ...credentials.flatMap((name): Rule[] => [
    {
      when: (c) => Boolean(c[name] && c.REDIS_URL),
      problem: () => `${name}: with REDIS_URL, credentials go in the URL`,
    },
    {
      when: (c) => Boolean(c[name] && !c.REDIS_URL && namedRedis(c).length === 0),
      problem: () => `${name}: only means something with REDIS_SENTINELS or REDIS_CLUSTER_NODES`,
    },
  ]),
  {
    when: (c) => c.REDIS_MIN_REPLICA_ACKS !== undefined && namedRedis(c).length === 0,
    problem: () => 'REDIS_MIN_REPLICA_ACKS: only means something with a Redis',
  },
];

/**
 * The fleet's Redis settings (undefined: none named), once REDIS_RULES found nothing wrong.
 * REDIS_MIN_REPLICA_ACKS defaults to what each topology can keep through a failover: 0 for one
 * server (it has no failover), 1 with Sentinel and with a Cluster (a promoted replica has every
 * claim a POST was sent on).
 */
export function redisOf(c: Variables): RedisSettings | undefined {
  const credentials = { username: c.REDIS_USERNAME, password: c.REDIS_PASSWORD };
  let topology: RedisTopology;
  if (c.REDIS_URL) topology = { kind: 'single', url: c.REDIS_URL };
  else if (c.REDIS_SENTINELS && c.REDIS_SENTINEL_MASTER) {
    topology = {
      kind: 'sentinel',
      sentinels: c.REDIS_SENTINELS,
      master: c.REDIS_SENTINEL_MASTER,
      sentinelPassword: c.REDIS_SENTINEL_PASSWORD,
      ...credentials,
    };
  } else if (c.REDIS_CLUSTER_NODES)
    topology = { kind: 'cluster', nodes: c.REDIS_CLUSTER_NODES, ...credentials };
  else return undefined;
  return {
    topology,
    timeoutMs: c.REDIS_TIMEOUT_MS,
    minReplicaAcks: c.REDIS_MIN_REPLICA_ACKS ?? (topology.kind === 'single' ? 0 : 1),
  };
}
