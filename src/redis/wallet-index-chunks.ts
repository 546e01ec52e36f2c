import type { Logger } from 'pino';
import { INDEX_CHUNK, type IndexChunk, type IndexedList } from '../loaders/wallet-index.ts';
import type { RedisClient } from './connection.ts';

/**
 * The fleet's copy of wallet indexes (loaders/wallet-index.ts), in immutable chunks of INDEX_CHUNK
 * ages, each written once full, under the index owner's hash tag (a merchant tag or a caller scope):
 *
 *   mwg:{owner}:windex:{list}:gen         the generation (a number; absent: 0)
 *   mwg:{owner}:windex:{list}:{gen}:{n}   chunk n: JSON {v, w, d}, `w` the chunk's wallet ids, `d`
 *                                         base64 of, per age, its wallet's place in `w` (u16) and its
 *                                         id's fingerprint (u32), little-endian
 *
 * A contradiction bumps the generation, so no replica loads the old chunks again. Errors are logged
 * and dropped: a replica then builds from the REST API (docs/wallet-index.md#memory-and-the-fleet).
 */

/** A week from writing; the index is then rebuilt from the REST API. */
const CHUNK_TTL_S = 7 * 24 * 3600;
const LOAD_BATCH = 32;
const FORMAT = 1;

export interface IndexChunkStore {
  /** The current generation and its chunks `from` onwards, as far as stored without a gap, at most `most`. */
  load(
    scope: string,
    list: IndexedList,
    from: number,
    most: number,
  ): Promise<{ generation: number | undefined; chunks: IndexChunk[] }>;
  /** Stores full chunk `n` of `generation` unless stored already. */
  save(scope: string, list: IndexedList, generation: number, n: number, chunk: IndexChunk): Promise<void>;
  /** The stored index was contradicted: every replica starts again. */
  drop(scope: string, list: IndexedList): Promise<void>;
}

export function redisIndexChunks(redis: RedisClient, logger: Logger): IndexChunkStore {
  const base = (scope: string, list: IndexedList) => `mwg:{${scope}}:windex:${list}`;
  const generation = async (scope: string, list: IndexedList) =>
    Number((await redis.get(`${base(scope, list)}:gen`)) ?? 0);
  const failed = (action: string) => (error: unknown) => {
    logger.warn(
      { err: error },
      `wallet index chunks: ${action} failed; the index is built from the REST API`,
    );
  };
  return {
    async load(scope, list, from, most) {
      let gen: number | undefined;
      const chunks: IndexChunk[] = [];
      try {
        gen = await generation(scope, list);
        for (let n = from; chunks.length < most; n += LOAD_BATCH) {
          const count = Math.min(LOAD_BATCH, most - chunks.length);
          const keys = Array.from({ length: count }, (_, i) => `${base(scope, list)}:${gen}:${n + i}`);
          const values = await redis.mget(...keys);
          for (const value of values) {
            const chunk = value === null ? null : decodeChunk(value);
            if (!chunk) return { generation: gen, chunks };
            chunks.push(chunk);
          }
        }
        return { generation: gen, chunks };
      } catch (error) {
        failed('load')(error);
        // Unknown generation: this job saves nothing (it might write under a dropped one).
        return { generation: undefined, chunks: [] };
      }
    },
    async save(scope, list, gen, n, chunk) {
      try {
        await redis.set(`${base(scope, list)}:${gen}:${n}`, encodeChunk(chunk), 'EX', CHUNK_TTL_S, 'NX');
      } catch (error) {
        failed('save')(error);
      }
    },
    async drop(scope, list) {
      try {
        await redis.incr(`${base(scope, list)}:gen`);
        await redis.expire(`${base(scope, list)}:gen`, CHUNK_TTL_S);
      } catch (error) {
        failed('drop')(error);
      }
    },
  };
}

export function encodeChunk(chunk: IndexChunk): string {
  const bytes = Buffer.alloc(chunk.ordinals.length * 6);
  for (let i = 0; i < chunk.ordinals.length; i++) {
    bytes.writeUInt16LE(chunk.ordinals[i] as number, i * 6);
    bytes.writeUInt32LE(chunk.fingerprints[i] as number, i * 6 + 2);
  }
  return JSON.stringify({ v: FORMAT, w: chunk.walletIds, d: bytes.toString('base64') });
}

/** The chunk, or null for anything that is not a whole chunk of this format (it is then rebuilt). */
export function decodeChunk(value: string): IndexChunk | null {
  try {
    const parsed = JSON.parse(value) as { v?: unknown; w?: unknown; d?: unknown };
    if (parsed.v !== FORMAT || !Array.isArray(parsed.w) || typeof parsed.d !== 'string') return null;
    const walletIds = parsed.w.filter((id): id is string => typeof id === 'string');
    const bytes = Buffer.from(parsed.d, 'base64');
    if (walletIds.length !== parsed.w.length || bytes.length !== INDEX_CHUNK * 6) return null;
    const ordinals = new Uint16Array(INDEX_CHUNK);
    const fingerprints = new Uint32Array(INDEX_CHUNK);
    for (let i = 0; i < INDEX_CHUNK; i++) {
      ordinals[i] = bytes.readUInt16LE(i * 6);
      fingerprints[i] = bytes.readUInt32LE(i * 6 + 2);
      if ((ordinals[i] as number) >= walletIds.length) return null;
    }
    return { walletIds, ordinals, fingerprints };
  } catch {
    return null;
  }
}
