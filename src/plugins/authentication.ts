import {
  type DocumentNode,
  type ExecutionResult,
  getOperationAST,
  Kind,
  type SelectionSetNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../context.ts';
import { ERROR_CODES } from '../error-codes.ts';
import { GatewayError, unauthenticated } from '../errors.ts';
import { refusal } from './refusal.ts';

/** Query parameter names that look like someone put a credential in the URL. */
const CREDENTIAL_PARAMS = new Set([
  'api_key',
  'apikey',
  'api-key',
  'key',
  'token',
  'access_token',
  'accesstoken',
  'auth',
  'authorization',
  'bearer',
]);

/**
 * Refuses a request that carries an API key in its URL (the REST spec forbids keys in URLs; URLs
 * end up in proxy logs and browser history) before anything reads or logs the URL.
 */
export function useRefuseKeyInURL(): Plugin {
  return {
    onRequest({ request, url, endResponse }) {
      let refused = false;
      for (const [name, value] of url.searchParams) {
        if (CREDENTIAL_PARAMS.has(name.toLowerCase()) || /^bearer\s/i.test(value)) refused = true;
      }
      if (!refused) return;
      const error = new GatewayError(
        'API_KEY_IN_URL',
        'API keys must not be sent in URLs. Send Authorization: Bearer <API key> as a header, and revoke a key that was sent in a URL.',
      );
      endResponse(
        refusal(request, ERROR_CODES[error.code].status, error.toJSON() as Parameters<typeof refusal>[2]),
      );
    },
  };
}

function onlyIntrospection(set: SelectionSetNode): boolean {
  return set.selections.every((s) =>
    s.kind === Kind.FIELD
      ? s.name.value.startsWith('__')
      : s.kind === Kind.INLINE_FRAGMENT && onlyIntrospection(s.selectionSet),
  );
}

/**
 * An operation that touches merchant data needs a well-formed `Authorization: Bearer <key>`;
 * without one it fails with HTTP 401 and UNAUTHENTICATED before any upstream call. Introspection
 * alone needs no key, so GraphiQL and codegen can load the schema.
 */
interface AuthenticationCheck {
  args: { contextValue: GatewayContext; document: DocumentNode; operationName?: string | null };
  setResultAndStopExecution(result: ExecutionResult): void;
}

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
