import { type GraphQLObjectType, isObjectType, isUnionType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { USER_ERRORS } from '../../src/errors/error-codes.ts';
import { schema } from '../../src/schema/index.ts';

describe('the table of withdrawal user errors', () => {
  it('is what the schema shows: one UserError type per row, each a member of the payload union', () => {
    const payload = schema.getType('CreateWithdrawalIntentPayload');
    if (!isUnionType(payload)) throw new Error('CreateWithdrawalIntentPayload is not a union');
    const members = payload.getTypes().map((t) => t.name);
    expect(members.sort()).toEqual(
      // WithdrawalRefusedError: the general member, for a code this release has no row for.
      [
        ...USER_ERRORS.map((row) => row.type),
        'WithdrawalRefusedError',
        'CreateWithdrawalIntentSuccess',
      ].sort(),
    );
    for (const row of USER_ERRORS) {
      const type = schema.getType(row.type) as GraphQLObjectType;
      expect(isObjectType(type)).toBe(true);
      expect(type.description).toBe(row.description);
      expect(type.getInterfaces().map((i) => i.name)).toEqual(['UserError']);
    }
  });

  it('has one row per code and per type name', () => {
    expect(new Set(USER_ERRORS.map((row) => row.code)).size).toBe(USER_ERRORS.length);
    expect(new Set(USER_ERRORS.map((row) => row.type)).size).toBe(USER_ERRORS.length);
  });
});

describe('docs/errors.md', () => {
  it("lists the table's rows, each type with its REST code, and no other but the general member", async () => {
    const { readFile } = await import('node:fs/promises');
    const page = await readFile(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    const table = page.slice(page.indexOf('| Result type | `code` |'));
    const rows = table
      .slice(0, table.indexOf('\n\n'))
      .split('\n')
      .slice(2)
      .map((row) => /^\| `(\w+)`[^|]*\| (.*) \|$/.exec(row)?.slice(1) ?? [`unparsed row: ${row}`]);
    expect(rows).toEqual([
      ...USER_ERRORS.map((row) => [row.type, `\`${row.code}\``]),
      ['WithdrawalRefusedError', expect.stringMatching(/^any other: /)],
    ]);
  });
});
