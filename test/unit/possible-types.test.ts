import { readFileSync } from 'node:fs';
import { isAbstractType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { USER_ERRORS } from '../../src/errors/error-codes.ts';
import { schema } from '../../src/schema/index.ts';

// schema/possible-types.json is what an Apollo Client app passes to InMemoryCache({ possibleTypes }):
// without it the cache cannot match `... on UserError` and drops `code` and `message`.
const shipped = JSON.parse(
  readFileSync(new URL('../../schema/possible-types.json', import.meta.url), 'utf8'),
) as {
  possibleTypes: Record<string, string[]>;
};

describe('schema/possible-types.json', () => {
  it('lists every member of every union and interface of the schema', () => {
    const expected = Object.fromEntries(
      Object.values(schema.getTypeMap())
        .filter((type) => isAbstractType(type) && !type.name.startsWith('__'))
        .map((type) => [
          type.name,
          schema
            .getPossibleTypes(type as never)
            .map((t) => t.name)
            .sort(),
        ]),
    );
    expect(shipped.possibleTypes).toEqual(expected);
  });

  it('names every business failure as a UserError', () => {
    expect(shipped.possibleTypes.UserError).toEqual(
      [...USER_ERRORS.map((row) => row.type), 'WithdrawalRefusedError'].sort(),
    );
  });
});
