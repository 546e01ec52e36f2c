import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { Kind, parse } from 'graphql';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { TrustedDocumentsMode } from '../config/config.ts';
import { ERROR_CODES, type ErrorCode, requestError } from '../errors/error-codes.ts';
import { codegenRegistration, DOCUMENT_ID, sha256 } from '../execution/document-hashes.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';

/** Default of the APQ registry's bound in estimated bytes (`registryBytes`): APQ_MAX_BYTES. */
export const APQ_MAX_BYTES = 16 * 1024 * 1024;

/** Estimated heap of one registry entry besides its strings (the LRU's node and slots). */
const ENTRY_OVERHEAD_BYTES = 200;

/** An upper bound of what a registry entry keeps: its key and text at two bytes per character. */
const registryBytes = (key: string, text: string) => 2 * (key.length + text.length) + ENTRY_OVERHEAD_BYTES;

/**
 * The documents APQ registered, per caller key, the first text under a hash staying: nobody can
 * change what another key's hash runs. Bounded by `maxBytes` of registryBytes, least recently used
 * first out (docs/trusted-documents.md#the-apq-registry-what-it-keeps-for-whom).
 */
export interface PersistedQueryRegistry {
  readonly bytes: number;
  readonly size: number;
  readonly maxBytes: number;
  /** The text the key of `scope` registered under `hash`. */
  get(scope: string, hash: string): string | undefined;
  /** Registers `text` under `hash` for `scope` unless that key registered one there already. */
  register(scope: string, hash: string, text: string): void;
}

export function createPersistedQueryRegistry(maxBytes: number = APQ_MAX_BYTES): PersistedQueryRegistry {
  // lru-cache wants a positive bound; at 1 byte nothing fits, so 0 keeps none.
  const entries = new LRUCache<string, string>({
    maxSize: Math.max(1, maxBytes),
    sizeCalculation: registryBytes,
  });
  const keyOf = (scope: string, hash: string) => `${scope}\n${hash}`;
  return {
    get bytes() {
      return entries.calculatedSize;
    },
    get size() {
      return entries.size;
    },
    maxBytes,
    get: (scope, hash) => entries.get(keyOf(scope, hash)),
    register(scope, hash, text) {
      const key = keyOf(scope, hash);
      if (entries.get(key) === undefined) entries.set(key, text);
    },
  };
}

/** Bytes of texts whose hashes (and codegen re-prints) are remembered, for keys accepted lately. */
const HASHES_MAX_BYTES = 4 * 1024 * 1024;

function requestedId(params: GraphQLParams & { documentId?: unknown }): string | null {
  if (typeof params.documentId === 'string') return params.documentId;
  const apq = (
    params.extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | undefined
  )?.persistedQuery;
  return apq?.version === 1 && typeof apq.sha256Hash === 'string' ? apq.sha256Hash : null;
}

const required = (detail: string) =>
  requestError(
    'PERSISTED_DOCUMENT_REQUIRED',
    `This gateway runs trusted documents only: send the documentId of an operation of the app's persisted-documents manifest. ${detail}`,
  );

const mismatch = () =>
  requestError(
    'BAD_REQUEST',
    "The persisted-query hash does not match the query it came with: it is neither the query's sha256 nor codegen's hash of that document.",
  );

/** An APQ registration waiting for its key to be accepted: kept when this request's answer is processed. */
interface PendingRegistration {
  scope: string;
  hash: string;
  /** The text to keep; null: codegen's re-print of `sent`, if `hash` is codegen's hash of it. */
  text: string | null;
  sent: string;
}

export interface TrustedDocumentsOptions {
  /** PERSISTED_DOCUMENTS_MODE: what documents outside the manifest may do. */
  mode: TrustedDocumentsMode;
  /** The persisted-documents manifest, hash → text. */
  manifest: ReadonlyMap<string, string>;
  /** Where `audit` logs each document outside the manifest. */
  logger: Logger;
  metrics: GatewayMetrics | null;
  /** The caller scope of the request's key (MerchantWalletClient.scopeOf); null without a key. */
  callerScope: (request: Request) => string | null;
  /** Whether the REST API accepted the request's key lately (MerchantWalletClient.authorizationKnownGood). */
  keyKnownGood: (request: Request) => boolean;
  /** QUERY_MAX_TOKENS: the most tokens of a text the gateway re-prints as codegen would. */
  maxTokens: number;
  /** Where APQ registrations are kept (off and audit): createPersistedQueryRegistry(). */
  registry: PersistedQueryRegistry;
}

/**
 * Trusted documents (docs/trusted-documents.md), @graphql-yoga/plugin-persisted-operations doing
 * the lookup: a request names a manifest document by `documentId` or Apollo's APQ hash. `off`: any
 * document runs, and APQ registers in `registry` for accepted keys only; `audit`: the same, each
 * document outside the manifest logged and counted; `enforce`: only the manifest's run, anything
 * else refused with PERSISTED_DOCUMENT_REQUIRED (400) before parsing. Only the text is supplied:
 * limits, cost and deduplication apply as to any document.
 */
export function useTrustedDocuments(options: TrustedDocumentsOptions): Plugin[] {
  const { mode, manifest, logger, metrics, callerScope, keyKnownGood, maxTokens, registry } = options;
  // Each text of an accepted key is hashed once, and re-printed as codegen would only once per hash.
  const hashes = new LRUCache<string, string>({
    maxSize: HASHES_MAX_BYTES,
    sizeCalculation: (hash, text) => registryBytes(text, hash),
  });
  const hashOf = (text: string, request: Request) => {
    let hash = hashes.get(text);
    if (hash === undefined) {
      hash = sha256(text);
      if (keyKnownGood(request)) hashes.set(text, hash);
    }
    return hash;
  };
  const registrations = new LRUCache<string, { text: string | null }>({
    maxSize: HASHES_MAX_BYTES,
    sizeCalculation: (entry, key) => registryBytes(key, entry.text ?? ''),
  });
  /** Codegen's re-print of `text` when `hash` is codegen's hash of it; for accepted keys only (it parses). */
  const codegenText = (text: string, hash: string) => {
    const key = `${hash}\n${text}`;
    let entry = registrations.get(key);
    if (entry === undefined) {
      entry = { text: codegenRegistration(text, hash, maxTokens) ?? null };
      registrations.set(key, entry);
    }
    return entry.text;
  };
  const pending = new WeakMap<Request, PendingRegistration>();
  const keep = (registration: PendingRegistration) => {
    const text = registration.text ?? codegenText(registration.sent, registration.hash);
    if (text !== null) registry.register(registration.scope, registration.hash, text);
  };
  /**
   * An APQ registration, under the text's sha256 or codegen's hash of its document; returns the hash
   * the document goes by. A known-good key's is checked and kept now (a wrong hash: BAD_REQUEST),
   * codegen's document running in its place; any other key's runs as sent, and is checked and kept
   * only if the key is known good by the time its answer is processed.
   */
  const register = (
    request: Request,
    params: GraphQLParams & { query: string },
    hash: string,
    textHash: string,
    setParams: (params: GraphQLParams) => void,
  ): string => {
    const scope = callerScope(request);
    const sent = params.query;
    if (scope !== null && keyKnownGood(request)) {
      const text = hash === textHash ? sent : codegenText(sent, hash);
      if (text === null) throw mismatch();
      registry.register(scope, hash, text);
      if (text !== sent) setParams({ ...params, query: text });
      return hash;
    }
    if (scope !== null) pending.set(request, { scope, hash, text: hash === textHash ? sent : null, sent });
    return textHash;
  };
  const registeredFor = (request: Request, hash: string) => {
    const scope = callerScope(request);
    return scope === null ? undefined : registry.get(scope, hash);
  };
  // No manifest and mode off: a plain query has nothing to be checked against.
  const plainQueriesFree = mode === 'off' && manifest.size === 0;
  return [
    {
      onParams({ params, setParams, request }) {
        // Yoga's GET parser reads only query, variables, operationName and extensions.
        if (request.method === 'GET' && (params as { documentId?: unknown }).documentId === undefined) {
          const documentId = new URL(request.url).searchParams.get('documentId');
          if (documentId !== null) {
            params = { ...params, documentId } as GraphQLParams;
            setParams(params);
          }
        }
        if (typeof params.query !== 'string') return;
        const id = requestedId(params);
        if (id === null && plainQueriesFree) return;
        const hash = id === null ? null : (DOCUMENT_ID.exec(id)?.[1] ?? null);
        if (hash !== null && manifest.has(hash)) {
          // A manifest id with a text (Apollo's WebSocket link): the id decides.
          const { query: _text, ...rest } = params;
          setParams({ ...rest, documentId: hash } as GraphQLParams);
          return;
        }
        const textHash = hashOf(params.query, request);
        if (manifest.has(textHash)) {
          const { query: _text, ...rest } = params;
          setParams({ ...rest, documentId: textHash } as GraphQLParams);
          return;
        }
        if (mode === 'enforce') {
          metrics?.trustedDocument('refused');
          throw required('A document sent as `query` is refused unless it is one of them.');
        }
        let documentHash = textHash;
        if (id !== null) {
          if (hash === null) throw mismatch();
          documentHash = register(request, { ...params, query: params.query }, hash, textHash, setParams);
        }
        metrics?.trustedDocument('untrusted');
        if (mode === 'audit') {
          logger.warn(
            { operationName: params.operationName ?? null, documentHash },
            'document outside the persisted-documents manifest',
          );
        }
      },
      onResultProcess({ request }) {
        const registration = pending.get(request);
        if (registration === undefined) return;
        pending.delete(request);
        if (keyKnownGood(request)) keep(registration);
      },
    },
    usePersistedOperations({
      allowArbitraryOperations: mode !== 'enforce',
      extractPersistedOperationId: (params) => {
        const id = requestedId(params);
        return id === null ? null : (DOCUMENT_ID.exec(id)?.[1] ?? id);
      },
      getPersistedOperation: (hash, request) => {
        const text = manifest.get(hash) ?? (mode === 'enforce' ? undefined : registeredFor(request, hash));
        if (text !== undefined) metrics?.trustedDocument(manifest.has(hash) ? 'trusted' : 'registered');
        else metrics?.trustedDocument('not_found');
        return text ?? null;
      },
      customErrors: {
        // Apollo's APQ clients resend the query on exactly this message (not where it would be refused).
        notFound:
          mode === 'enforce'
            ? () => required('This documentId is not in the manifest.')
            : {
                message: 'PersistedQueryNotFound',
                extensions: {
                  code: 'PERSISTED_QUERY_NOT_FOUND' satisfies ErrorCode,
                  http: { status: ERROR_CODES.PERSISTED_QUERY_NOT_FOUND.status },
                },
              },
        keyNotFound: () => required('The request has neither a query nor a documentId.'),
        persistedQueryOnly: () => required('A document sent as `query` is refused.'),
      },
    }),
  ];
}

/** The operation names of a manifest's documents; a document that does not parse names none. */
export function operationNamesOf(manifest: ReadonlyMap<string, string>): Set<string> {
  const names = new Set<string>();
  for (const text of manifest.values()) {
    try {
      for (const definition of parse(text).definitions) {
        if (definition.kind === Kind.OPERATION_DEFINITION && definition.name)
          names.add(definition.name.value);
      }
    } catch {
      // Not a document: it names no operation.
    }
  }
  return names;
}
