import { introspectionFromSchema, isObjectType } from 'graphql';
import { expect, it } from 'vitest';
import { cacheKeys } from '../../examples/urql/cache-keys.ts';
import introspection from '../../schema/introspection.json' with { type: 'json' };
import { schema } from '../../src/schema/index.ts';

// graphcache normalises by `id`; the urql example derives a `keys` entry for every other object type
// from the introspection it also gives graphcache as `schema` (schema/introspection.json, kept fresh
// by `npm run codegen:check`). Checked here against graphql-js's own reading of the schema.
it('cacheKeys embeds exactly the object types of the schema without an id, roots and introspection types aside', () => {
  const roots = new Set(
    [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].map((type) => type?.name),
  );
  const idless = Object.values(schema.getTypeMap())
    .filter((type) => isObjectType(type) && !type.name.startsWith('__') && !roots.has(type.name))
    .filter((type) => isObjectType(type) && !type.getFields().id)
    .map((type) => type.name)
    .sort();
  expect(idless.length).toBeGreaterThan(20);
  const keys = cacheKeys(introspectionFromSchema(schema));
  expect(Object.keys(keys).sort()).toEqual(idless);
  for (const key of Object.values(keys)) expect(key?.({ __typename: 'PageInfo' })).toBeNull();
  // What the example app reads is the same.
  expect(Object.keys(cacheKeys(introspection)).sort()).toEqual(idless);
});
