import { encodeGlobalID } from '@pothos/plugin-relay';
import { badUserInput, GatewayError, isGatewayError } from '../errors/errors.ts';
import { INPUT_LIMITS } from './input-limits.ts';

export type NodeTypename = 'Wallet' | 'Deposit' | 'WithdrawalIntent';

/** Node types a global id may name; anything else is BAD_USER_INPUT before any loader runs. */
export const NODE_TYPES: ReadonlySet<string> = new Set<NodeTypename>([
  'Wallet',
  'Deposit',
  'WithdrawalIntent',
]);

/** The global id of a REST object, as its `id` field answers it. */
export function globalIdOf(type: NodeTypename, restId: string): string {
  return encodeGlobalID(type, restId);
}

/** A REST id as the gateway forwards it: 1 to INPUT_LIMITS.restId printable ASCII characters. */
const REST_ID = new RegExp(`^[\\x21-\\x7e]{1,${INPUT_LIMITS.restId}}$`);

/** Whether `id` can be a REST id the gateway sends (a global id's decoded one included). */
export function isRestId(id: string): boolean {
  return REST_ID.test(id);
}

/** Padded standard base64, as @pothos/core's decodeBase64 accepts it. */
const BASE64 = /^(?:[\d+/A-Za-z]{4})*(?:[\d+/A-Za-z]{2}==|[\d+/A-Za-z]{3}=)?$/;
const TYPENAME = /^[A-Z_a-z]\w*$/;

/**
 * What @pothos/plugin-relay's decodeGlobalID returns, or null where it throws, without the cost of a
 * throw per REST id (docs/benchmark.md); test/unit/node-ids.test.ts holds the two to the same answers.
 */
export function decodedGlobalId(id: string): { typename: string; id: string } | null {
  if (!BASE64.test(id)) return null;
  const parts = Buffer.from(id, 'base64').toString().split(':');
  const [typename, first] = parts;
  if (!typename || !first || !TYPENAME.test(typename)) return null;
  return { typename, id: parts.length > 2 ? parts.slice(1).join(':') : first };
}

/**
 * The REST id behind an `id` argument that is a global id or a REST id (docs/decisions.md: they
 * cannot be confused). BAD_USER_INPUT for a global id of another node type, an id longer than
 * INPUT_LIMITS.id (checked before decoding), or a REST id, given or decoded, that is not one.
 */
export function restIdOf(id: string, expected: NodeTypename, field: readonly string[] = ['id']): string {
  const name = field.join('.');
  if (id.length > INPUT_LIMITS.id) {
    throw badUserInput(`${name} must be at most ${INPUT_LIMITS.id} characters; received ${id.length}`, field);
  }
  const decoded = decodedGlobalId(id);
  if (decoded && NODE_TYPES.has(decoded.typename)) {
    if (decoded.typename !== expected) {
      throw badUserInput(`${name} is the global id of a ${decoded.typename}, not of a ${expected}`, field);
    }
    if (!isRestId(decoded.id)) throw badUserInput(`${name} is not a global id of this API`, field);
    return decoded.id;
  }
  if (!isRestId(id)) {
    throw badUserInput(`${name} must be a global id or a REST id of a ${expected}`, field);
  }
  return id;
}

/** Loads the object behind an `id` argument (restIdOf); a 400 for its REST id says what this API accepts. */
export async function loadById<T>(
  load: (restId: string) => Promise<T>,
  id: string,
  expected: NodeTypename,
  field: readonly string[] = ['id'],
): Promise<T> {
  const restId = restIdOf(id, expected, field);
  try {
    return await load(restId);
  } catch (error) {
    if (!isGatewayError(error) || error.code !== 'BAD_USER_INPUT' || error.upstream?.status !== 400)
      throw error;
    const name = field.join('.');
    const said =
      restId === id
        ? `${name} must be a global id of a ${expected} or its REST id; as a REST id it was refused`
        : `${name} is a global id of a ${expected}, but the REST id inside it was refused`;
    throw new GatewayError('BAD_USER_INPUT', `${said} (REST API: ${error.message})`, {
      upstream: error.upstream,
      extensions: { field },
    });
  }
}
