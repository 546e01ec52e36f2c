import { isObjectType } from 'graphql';
import { expect, it } from 'vitest';
import { keys } from '../../examples/urql/cache-keys.ts';
import { schema } from '../../src/schema/index.ts';

// graphcache normalises by `id`; every other object type needs an entry in examples/urql/cache-keys.ts,
// or graphcache warns at runtime ("Invalid key") on the first screen that selects it.
it("the urql example's graphcache keys name every object type of the schema without an id, and nothing else", () => {
  const roots = new Set(
    [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].map((type) => type?.name),
  );
  const idless = Object.values(schema.getTypeMap())
    .filter((type) => isObjectType(type) && !type.name.startsWith('__') && !roots.has(type.name))
    .filter((type) => isObjectType(type) && !type.getFields().id)
    .map((type) => type.name)
    .sort();
  expect(idless.length).toBeGreaterThan(20);
  expect(Object.keys(keys).sort()).toEqual(idless);
});
