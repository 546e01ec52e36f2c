import {
  type DocumentNode,
  type ExecutionResult,
  getOperationAST,
  Kind,
  type SelectionSetNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../context.ts';
import { unauthenticated } from '../errors/errors.ts';

function onlyIntrospection(set: SelectionSetNode): boolean {
  return set.selections.every((s) =>
    s.kind === Kind.FIELD
      ? s.name.value.startsWith('__')
      : s.kind === Kind.INLINE_FRAGMENT && onlyIntrospection(s.selectionSet),
  );
}

interface AuthenticationCheck {
  args: { contextValue: GatewayContext; document: DocumentNode; operationName?: string | null };
  setResultAndStopExecution(result: ExecutionResult): void;
}

/**
 * Without a well-formed `Authorization: Bearer <key>`, an operation fails with 401 UNAUTHENTICATED
 * before any upstream call; introspection alone needs none (GraphiQL and codegen load the schema).
 */
export function useAuthentication(): Plugin<GatewayContext> {
  const check = ({ args, setResultAndStopExecution }: AuthenticationCheck) => {
    if (args.contextValue.authorization) return;
    const operation = getOperationAST(args.document, args.operationName);
    if (operation && onlyIntrospection(operation.selectionSet)) return;
    setResultAndStopExecution({ data: null, errors: [unauthenticated()] });
  };
  // Queries and mutations execute; subscriptions subscribe: both are checked.
  return { onExecute: check, onSubscribe: check };
}
