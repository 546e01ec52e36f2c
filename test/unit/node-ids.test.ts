import { encodeGlobalID } from '@pothos/plugin-relay';
import type { GraphQLObjectType, GraphQLResolveInfo } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.ts';

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
