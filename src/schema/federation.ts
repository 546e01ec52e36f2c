import { builder } from './builder.ts';
import { decodedGlobalId, isRestId, type NodeTypename } from './global-ids.ts';
import { INPUT_LIMITS } from './input-limits.ts';
import { Deposit } from './types/deposit.ts';
import { loadedNode, Wallet } from './types/wallet.ts';
import { WithdrawalIntent } from './types/withdrawal-intent.ts';

/**
 * Wallet, Deposit and WithdrawalIntent as Federation entities keyed by their global id, resolved
 * through the request's loaders as `nodes(ids:)` is (docs/supergraph.md). Only the subgraph schema
 * (FEDERATION=true) carries them: `builder.asEntity` adds @key and the reference resolver.
 */

/** The REST id a reference names for `typename`, or null when it names none of this subgraph's. */
function restIdOf(reference: { id: unknown }, typename: NodeTypename): string | null {
  const { id } = reference;
  if (typeof id !== 'string' || id.length > INPUT_LIMITS.id) return null;
  const decoded = decodedGlobalId(id);
  return decoded && decoded.typename === typename && isRestId(decoded.id) ? decoded.id : null;
}

/** Loads the entity a reference names through the request's loaders; null for none. */
async function resolved<T extends object>(
  restId: string | null,
  typename: NodeTypename,
  load: (restId: string) => Promise<T | null>,
): Promise<T | null> {
  return restId === null ? null : loadedNode(await load(restId), typename);
}

const key = builder.selection<{ id: string }>('id');

builder.asEntity(Wallet, {
  key,
  resolveReference: (reference, context) =>
    resolved(restIdOf(reference, 'Wallet'), 'Wallet', (id) => context.loaders.wallet.load(id)),
});
builder.asEntity(Deposit, {
  key,
  resolveReference: (reference, context) =>
    resolved(restIdOf(reference, 'Deposit'), 'Deposit', (id) => context.loaders.deposit.load(id)),
});
builder.asEntity(WithdrawalIntent, {
  key,
  resolveReference: (reference, context) =>
    resolved(restIdOf(reference, 'WithdrawalIntent'), 'WithdrawalIntent', (id) =>
      context.loaders.withdrawalIntent.load(id),
    ),
});
