import { decodeGlobalID, encodeGlobalID } from '@pothos/plugin-relay';
import { badUserInput } from './errors.ts';

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

/**
 * The REST id behind an `id` argument that may be either a global id (from this API) or a REST id
 * (from the merchant console, a webhook, or the REST API). A global id decodes to
 * "<Typename>:<rest id>" for one of our node types; REST ids never do, so the two cannot be
 * confused. A global id of another node type is BAD_USER_INPUT.
 */
export function restIdOf(id: string, expected: NodeTypename, field: readonly string[] = ['id']): string {
  let decoded: { typename: string; id: string } | null = null;
  try {
    decoded = decodeGlobalID(id);
  } catch {
    decoded = null;
  }
  if (decoded && NODE_TYPES.has(decoded.typename)) {
    if (decoded.typename !== expected) {
      throw badUserInput(
        `${field.join('.')} is the global id of a ${decoded.typename}, not of a ${expected}`,
        field,
      );
    }
    return decoded.id;
  }
  if (!/^[\x21-\x7e]{1,128}$/.test(id)) {
    throw badUserInput(`${field.join('.')} must be a global id or a REST id of a ${expected}`, field);
  }
  return id;
}
