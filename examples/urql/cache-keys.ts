import type { KeyingConfig } from '@urql/exchange-graphcache';

/** What cacheKeys reads of an introspection result, such as codegen's `schema/introspection.json`. */
export interface SchemaTypes {
  __schema: {
    queryType: { name: string } | null;
    mutationType?: { name: string } | null;
    subscriptionType?: { name: string } | null;
    types: readonly { kind: string; name: string; fields?: readonly { name: string }[] | null }[];
  };
}

/**
 * graphcache's `keys` for a schema: `() => null` for every object type without an `id` (or
 * `_id`), the fields graphcache normalises by. Such a type has no identity of its own, so it stays
 * embedded in the object or list that holds it (a connection in the field and arguments that
 * returned it, a balance in its wallet, a failure in the mutation's result); without an entry
 * graphcache warns "Invalid key" at runtime and embeds it anyway. Read from the same introspection
 * as graphcache's `schema`, so a type the schema gains needs nothing here.
 */
export function cacheKeys(schema: SchemaTypes): KeyingConfig {
  const { queryType, mutationType, subscriptionType, types } = schema.__schema;
  const roots = new Set([queryType?.name, mutationType?.name, subscriptionType?.name]);
  const embedded = () => null;
  return Object.fromEntries(
    types
      .filter((type) => type.kind === 'OBJECT' && !type.name.startsWith('__') && !roots.has(type.name))
      .filter((type) => !type.fields?.some((field) => field.name === 'id' || field.name === '_id'))
      .map((type) => [type.name, embedded]),
  );
}
