import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { Kind, parse } from 'graphql';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { TrustedDocumentsMode } from '../config.ts';
import { codegenRegistration, DOCUMENT_ID, sha256 } from '../document-hashes.ts';
import { ERROR_CODES, type ErrorCode, requestError } from '../error-codes.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';

/**
 * Trusted documents (persisted operations), with @graphql-yoga/plugin-persisted-operations doing
 * the lookup. The apps' operations are known at build time: codegen's client preset writes them to
 * a manifest (`sha256:<hex>` → document text), loaded from PERSISTED_DOCUMENTS. A request names one
 * by `documentId` (the GraphQL over HTTP persisted-documents convention) or by Apollo's APQ
 * extension (`extensions.persistedQuery.sha256Hash`), and sends no `query`.
 *
 * - `off`: any document runs; ids of the manifest work; APQ registers new documents (a request
 *   with both the query and its hash) in a bounded per-process store. The hash is the sha256 of
 *   the text, or the hash codegen wrote for the app's document (sha256 of codegen's normalised
 *   print, see document-hashes.ts), sent with the client's own print of it, as Apollo's
 *   PersistedQueryLink does when `generateHash` returns codegen's hash.
 * - `audit`: the same, and every document outside the manifest is logged and counted.
 * - `enforce`: only the manifest's documents run; a `query` (unless its text is one of them), an
 *   unknown id and an APQ registration are refused with HTTP 400 and PERSISTED_DOCUMENT_REQUIRED,
 *   before anything is parsed.
 *
 * A persisted document then goes through the same parse, limits, cost check and deduplication as
 * any other: the plugin only supplies its text.
 */

/**
 * Tokens a registration's text may have for the gateway to re-print it as codegen would; more than
 * the default QUERY_MAX_TOKENS (3000), which would refuse such a document anyway.
 */
const MAX_NORMALISED_TOKENS = 10_000;

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

export function useTrustedDocuments(options: {
  mode: TrustedDocumentsMode;
  manifest: ReadonlyMap<string, string>;
  logger: Logger;
  metrics: GatewayMetrics | null;
  /** Documents APQ may register per process (off and audit). */
  maxRegistered?: number;
}): Plugin[] {
  const { mode, manifest, logger, metrics } = options;
  const registered = new LRUCache<string, string>({ max: options.maxRegistered ?? 10_000 });
  // An app sends the same few documents again and again (Apollo's WebSocket link sends the text with
  // the hash every time): hash each text once, and parse and re-print it as codegen would only
  // when the hash it came with is not its own.
  const hashes = new LRUCache<string, string>({ max: 1_000 });
  const hashOf = (text: string) => {
    let hash = hashes.get(text);
    if (hash === undefined) {
      hash = sha256(text);
      hashes.set(text, hash);
    }
    return hash;
  };
  const registrations = new LRUCache<string, { text: string | null }>({ max: 1_000 });
  const codegenText = (text: string, hash: string) => {
    const key = `${hash}\n${text}`;
    let entry = registrations.get(key);
    if (entry === undefined) {
      entry = { text: codegenRegistration(text, hash, MAX_NORMALISED_TOKENS) ?? null };
      registrations.set(key, entry);
    }
    return entry.text;
  };
  // Nothing to check a plain query against: no manifest, and documents outside it are neither refused nor logged.
  const plainQueriesFree = mode === 'off' && manifest.size === 0;
  return [
    {
      onParams({ params, setParams }) {
        if (typeof params.query !== 'string') return;
        const id = requestedId(params);
        if (id === null && plainQueriesFree) return;
        const hash = id === null ? null : (DOCUMENT_ID.exec(id)?.[1] ?? null);
        if (hash !== null && manifest.has(hash)) {
          // A manifest id with a text, as Apollo's WebSocket link sends it (its own print of the
          // document): the id decides, and the manifest's text runs.
          const { query: _text, ...rest } = params;
          setParams({ ...rest, documentId: hash } as GraphQLParams);
          return;
        }
        const textHash = hashOf(params.query);
        if (manifest.has(textHash)) {
          // The manifest's own text: run it as the persisted document it is.
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
          // An APQ registration: the query with its hash, or with codegen's hash of the same
          // document. Under codegen's hash the registry keeps (and this request runs) the document
          // codegen hashed, which the hash alone decides (document-hashes.ts, codegenRegistration).
          const text =
            hash === textHash ? params.query : hash === null ? null : codegenText(params.query, hash);
          if (hash === null || text === null) {
            throw requestError(
              'BAD_REQUEST',
              "The persisted-query hash does not match the query it came with: it is neither the query's sha256 nor codegen's hash of that document.",
            );
          }
          registered.set(hash, text);
          if (text !== params.query) setParams({ ...params, query: text });
          documentHash = hash;
        }
        metrics?.trustedDocument('untrusted');
        if (mode === 'audit') {
          logger.warn(
            { operationName: params.operationName ?? null, documentHash },
            'document outside the persisted-documents manifest',
          );
        }
      },
    },
    usePersistedOperations({
      allowArbitraryOperations: mode !== 'enforce',
      extractPersistedOperationId: (params) => {
        const id = requestedId(params);
        return id === null ? null : (DOCUMENT_ID.exec(id)?.[1] ?? id);
      },
      getPersistedOperation: (hash) => {
        const text = manifest.get(hash) ?? (mode === 'enforce' ? undefined : registered.get(hash));
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
