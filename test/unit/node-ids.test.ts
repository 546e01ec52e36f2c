import { decodeGlobalID, encodeGlobalID } from '@pothos/plugin-relay';
import fc from 'fast-check';
import type { GraphQLObjectType, GraphQLResolveInfo } from 'graphql';
import { describe, expect, it } from 'vitest';
import { decodedGlobalId, restIdOf } from '../../src/schema/global-ids.ts';
import { schema } from '../../src/schema/index.ts';
import { INPUT_LIMITS } from '../../src/schema/input-limits.ts';

describe('node ids', () => {
  it.each(['Wallet', 'Deposit', 'WithdrawalIntent'])(
    '%s.id is the global id, resolved without a promise',
    (typename) => {
      const field = (schema.getType(typename) as GraphQLObjectType).getFields().id;
      const id = field?.resolve?.({ id: 'rest-id-1' }, {}, {}, {} as GraphQLResolveInfo);
      expect(id).toBe(encodeGlobalID(typename, 'rest-id-1'));
    },
  );
});

describe('id arguments', () => {
  it('take the global id of the longest REST id, and refuse one character more by length', () => {
    const longest = encodeGlobalID('WithdrawalIntent', 'i'.repeat(128));
    expect(longest.length).toBeLessThanOrEqual(INPUT_LIMITS.id);
    expect(restIdOf(longest, 'WithdrawalIntent')).toBe('i'.repeat(128));
    expect(() => restIdOf('i'.repeat(INPUT_LIMITS.id + 1), 'Wallet')).toThrow(
      `id must be at most ${INPUT_LIMITS.id} characters; received ${INPUT_LIMITS.id + 1}`,
    );
    expect(() => restIdOf(encodeGlobalID('Wallet', 'i'.repeat(129)), 'Wallet')).toThrow(
      'id is not a global id of this API',
    );
  });
});

describe('decodedGlobalId', () => {
  const pothos = (id: string) => {
    try {
      return decodeGlobalID(id);
    } catch {
      return null;
    }
  };

  it('answers as Pothos decodeGlobalID does, null where it throws', () => {
    const texts = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.uuid(),
      fc
        .tuple(fc.constantFrom('Wallet', 'Deposit', 'WithdrawalIntent', 'x', '9a', '_', ''), fc.string())
        .map(([typename, rest]) => `${typename}:${rest}`),
    );
    const ids = fc.oneof(
      texts,
      texts.map((text) => Buffer.from(text).toString('base64')),
      texts.map((text) => Buffer.from(text).toString('base64url')),
      texts.map((text) => Buffer.from(text).toString('base64').replace(/=+$/, '')),
    );
    fc.assert(
      fc.property(ids, (id) => {
        expect(decodedGlobalId(id)).toEqual(pothos(id));
      }),
      { numRuns: 2000 },
    );
    expect(decodedGlobalId(encodeGlobalID('Wallet', 'a:b:c'))).toEqual({ typename: 'Wallet', id: 'a:b:c' });
    expect(decodedGlobalId('b7c4e543-dbb5-495a-a32c-89f7ade3a8c0')).toBeNull();
  });
});
