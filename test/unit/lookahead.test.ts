import { type GraphQLResolveInfo, Kind, type OperationDefinitionNode, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { selects, wantsItemWallets } from '../../src/schema/lookahead.ts';

/** The resolve info of the first root field of `query`, as far as selects() reads it. */
function infoOf(query: string): GraphQLResolveInfo {
  const document = parse(query);
  const operation = document.definitions.find(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const field = operation?.selectionSet.selections[0];
  const fragments = Object.fromEntries(
    document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d]] : [])),
  );
  return { fieldNodes: field ? [field] : [], fragments } as unknown as GraphQLResolveInfo;
}

describe('selects', () => {
  it('follows a path of field names, aliases or not', () => {
    expect(wantsItemWallets({}, infoOf('{ deposits { nodes { w: wallet { address } } } }'))).toBe(true);
    expect(wantsItemWallets({}, infoOf('{ deposits { edges { node { wallet { id } } } } }'))).toBe(true);
    expect(wantsItemWallets({}, infoOf('{ deposits { nodes { walletRestId amount } } }'))).toBe(false);
    expect(wantsItemWallets({}, infoOf('{ deposits { edges { cursor } wallet: totalCount } }'))).toBe(false);
  });

  it('looks through inline fragments and fragment spreads', () => {
    expect(
      wantsItemWallets(
        {},
        infoOf(
          '{ deposits { ... on DepositConnection { nodes { ...W } } } } fragment W on Deposit { wallet { id } }',
        ),
      ),
    ).toBe(true);
    expect(selects(infoOf('{ deposits { ...Missing } }'), ['nodes'])).toBe(false);
  });

  it('leaves a one-item window to the by-id wallet fetch', () => {
    const info = infoOf('{ deposits { nodes { wallet { id } } } }');
    expect(wantsItemWallets({ first: 1 }, info)).toBe(false);
    expect(wantsItemWallets({ last: 2 }, info)).toBe(true);
  });

  it('needs the whole path, not only its last name', () => {
    expect(selects(infoOf('{ deposits { pageInfo { hasNextPage } } }'), ['nodes', 'hasNextPage'])).toBe(
      false,
    );
    expect(selects(infoOf('{ deposits { pageInfo { hasNextPage } } }'), ['pageInfo', 'hasNextPage'])).toBe(
      true,
    );
  });
});
