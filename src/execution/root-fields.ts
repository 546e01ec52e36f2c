import {
  type DocumentNode,
  type ExecutionArgs,
  type FieldNode,
  type FragmentDefinitionNode,
  getOperationAST,
  isNonNullType,
  Kind,
  type SelectionSetNode,
} from 'graphql';

/**
 * The fields an operation's root selects whose type is non-null (of this schema, `nodes` and
 * `createWithdrawalIntent`), through its inline fragments and fragment spreads, in document order.
 * When one of them fails, the whole `data` is null: compiled execution leaves such operations to
 * the usual executor, and the error contract lists only their errors in such an answer.
 */
export function nonNullRootFields(args: ExecutionArgs): FieldNode[] {
  const operation = getOperationAST(args.document, args.operationName);
  const root = operation && args.schema.getRootType(operation.operation);
  if (!operation || !root) return [];
  const fields = root.getFields();
  return rootFieldNodes(args.document, operation.selectionSet).filter((node) => {
    const field = fields[node.name.value];
    return field !== undefined && isNonNullType(field.type);
  });
}

function rootFieldNodes(document: DocumentNode, set: SelectionSetNode, depth = 0): FieldNode[] {
  // Fragment cycles are refused by validation; the depth bound keeps this walk finite regardless.
  if (depth > 64) return [];
  const nodes: FieldNode[] = [];
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) nodes.push(selection);
    else if (selection.kind === Kind.INLINE_FRAGMENT)
      nodes.push(...rootFieldNodes(document, selection.selectionSet, depth + 1));
    else {
      const fragment = document.definitions.find(
        (d): d is FragmentDefinitionNode =>
          d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === selection.name.value,
      );
      if (fragment) nodes.push(...rootFieldNodes(document, fragment.selectionSet, depth + 1));
    }
  }
  return nodes;
}
