import { type GraphQLResolveInfo, Kind, type SelectionSetNode } from 'graphql';
import { DEFAULT_WINDOW } from './pagination.ts';

/**
 * Whether the field being resolved selects `path` (field names) below it, through fragments, to
 * start upstream calls early. @skip/@include are not evaluated: at worst a call nobody needed.
 */
export function selects(info: GraphQLResolveInfo, path: readonly string[]): boolean {
  let level: SelectionSetNode[] = info.fieldNodes.flatMap((node) =>
    node.selectionSet ? [node.selectionSet] : [],
  );
  for (const [depth, name] of path.entries()) {
    const next: SelectionSetNode[] = [];
    let found = false;
    const visit = (set: SelectionSetNode) => {
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) {
          if (selection.name.value !== name) continue;
          found = true;
          if (selection.selectionSet) next.push(selection.selectionSet);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          visit(selection.selectionSet);
        } else {
          const fragment = info.fragments[selection.name.value];
          if (fragment) visit(fragment.selectionSet);
        }
      }
    };
    for (const set of level) visit(set);
    if (!found) return false;
    if (depth === path.length - 1) return true;
    level = next;
  }
  return false;
}

/**
 * Whether the field being resolved selects `name` right below it outside any fragment marked
 * @defer (through inline fragments and spreads without it).
 */
export function selectsUndeferred(info: GraphQLResolveInfo, name: string): boolean {
  const deferred = (node: { directives?: readonly { name: { value: string } }[] | undefined }) =>
    node.directives?.some((directive) => directive.name.value === 'defer') ?? false;
  const seen = new Set<string>();
  const visit = (set: SelectionSetNode): boolean =>
    set.selections.some((selection) => {
      if (selection.kind === Kind.FIELD) return selection.name.value === name;
      if (deferred(selection)) return false;
      if (selection.kind === Kind.INLINE_FRAGMENT) return visit(selection.selectionSet);
      const fragment = info.fragments[selection.name.value];
      if (!fragment || seen.has(selection.name.value)) return false;
      seen.add(selection.name.value);
      return visit(fragment.selectionSet);
    });
  return info.fieldNodes.some((node) => node.selectionSet !== undefined && visit(node.selectionSet));
}

/**
 * Whether a list connection should start the wallet list call beside its page: its window holds more
 * than one item and selects their wallets (one item's wallet is cheaper by id, after the page).
 */
export function wantsItemWallets(
  args: { first?: number | null; last?: number | null },
  info: GraphQLResolveInfo,
): boolean {
  return (
    (args.first ?? args.last ?? DEFAULT_WINDOW) > 1 &&
    (selects(info, ['nodes', 'wallet']) || selects(info, ['edges', 'node', 'wallet']))
  );
}
