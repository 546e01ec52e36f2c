import { type GraphQLResolveInfo, Kind, type SelectionSetNode } from 'graphql';
import { DEFAULT_WINDOW } from './pagination.ts';

/**
 * Whether the field being resolved selects `path` below it (field names, through inline fragments
 * and fragment spreads; aliases do not matter). Used to start upstream calls early, in parallel,
 * when the rest of the query will need them. @skip/@include are not evaluated: a skipped field
 * still counts, which costs at most a call the query did not need.
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
 * Whether a list connection should start the wallet list call alongside its page: its window holds
 * more than one item and it selects their wallets, through nodes or edges. (One item's wallet is
 * cheaper by id, after the page.)
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
