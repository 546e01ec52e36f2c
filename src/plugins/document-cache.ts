import type { DocumentNode, GraphQLError, Source } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';

/**
 * The parse and validation cache, in place of Yoga's (`parserAndValidationCache: false` in
 * yoga.ts). Yoga's keeps 1,024 documents by text with no bound in bytes, and fills it for anyone
 * before the key is checked: a parsed document of 3,000 tokens holds ~1.5 MB, one of 40,000
 * comments ~3.6 MB, so a keyless flood could make it hold gigabytes. This one
 *
 * - keeps a document only when the request may fill it (`mayKeep`: a key the REST API accepted
 *   lately, or a document of the persisted-documents manifest), and only once it validated
 *   without errors (errors are neither kept nor cached: such a document is parsed and validated
 *   again, as any uncached one);
 * - is bounded by `maxBytes` of estimated heap (`retainedBytes`), an upper bound of what a kept
 *   document holds, least recently used first out;
 * - hands out the same document object for the same text while it is kept, which the cost
 *   limit's and compiled execution's WeakMaps rely on.
 *
 * A kept document is served to any request with the same text, keyed or not: that costs nothing
 * to keep. See docs/production.md, "Parse and validation cache", for the figures.
 */

/** Default of `maxBytes`: ~17 documents at the token limit, over a thousand of an app's screens. */
export const DOCUMENT_CACHE_MAX_BYTES = 32 * 1024 * 1024;

/**
 * Heap a parsed document holds per lexer token, its AST nodes and locations included: measured
 * at 290–490 bytes for documents of real fields (3,000 one-letter-ish fields: 490) and 88 for
 * comments, which the token limit does not count (test/unit/document-cache.test.ts measures it).
 */
const BYTES_PER_TOKEN = 600;
/** Without locations (no token list to count), per character of text: a token has ≥ 2 characters. */
const BYTES_PER_CHAR_WITHOUT_LOCATIONS = 300;

/**
 * An upper bound of the heap `document`, parsed from `text`, holds: the text (two bytes per
 * character at most) and `BYTES_PER_TOKEN` for each token of the lexer's list, which the
 * document's locations keep alive (comments included).
 */
export function retainedBytes(text: string, document: DocumentNode): number {
  let token = document.loc?.startToken;
  if (token === undefined) return text.length * (2 + BYTES_PER_CHAR_WITHOUT_LOCATIONS);
  let tokens = 0;
  while (token) {
    tokens++;
    token = token.next ?? undefined;
  }
  return text.length * 2 + tokens * BYTES_PER_TOKEN;
}

export interface DocumentCache {
  /** The estimated bytes held (retainedBytes of every document kept); at most `maxBytes`. */
  readonly bytes: number;
  /** Documents kept. */
  readonly size: number;
  readonly maxBytes: number;
  get(text: string): DocumentNode | undefined;
  /** Keeps `document`, parsed from `text`; one larger than the whole bound is not kept. */
  keep(text: string, document: DocumentNode): void;
}

export function createDocumentCache(maxBytes: number = DOCUMENT_CACHE_MAX_BYTES): DocumentCache {
  const documents = new LRUCache<string, DocumentNode>({
    maxSize: maxBytes,
    sizeCalculation: (document, text) => Math.max(1, retainedBytes(text, document)),
  });
  return {
    get bytes() {
      return documents.calculatedSize;
    },
    get size() {
      return documents.size;
    },
    maxBytes,
    get: (text) => documents.get(text),
    keep: (text, document) => {
      documents.set(text, document);
    },
  };
}

const NO_ERRORS: readonly GraphQLError[] = Object.freeze([]);

const textOf = (source: string | Source): string => (typeof source === 'string' ? source : source.body);

/**
 * Parses and validates through `cache`. `mayKeep(request)` is asked once per document not kept
 * yet, after it validated; the parse and validation of anything else are this request's alone.
 * Place it after every plugin that adds a validation rule: it sees the rules they added.
 */
export function useDocumentCache(
  cache: DocumentCache,
  mayKeep: (request: Request, text: string) => boolean,
): Plugin {
  // The text a document not kept yet was parsed from, for as long as the request holds it.
  const parsedFrom = new WeakMap<DocumentNode, string>();
  // The validation rules (their names, as Yoga's cache keys validation) a kept document passed.
  const validated = new WeakMap<DocumentNode, string>();
  return {
    onParse({ params, setParsedDocument }) {
      const text = textOf(params.source);
      const kept = cache.get(text);
      if (kept !== undefined) {
        setParsedDocument(kept);
        return;
      }
      return ({ result }) => {
        if (result && !(result instanceof Error)) parsedFrom.set(result as DocumentNode, text);
      };
    },
    onValidate({ params: { schema, documentAST, rules }, setResult, context }) {
      if (schema == null) return;
      const ruleNames = rules?.map((rule: { name: string }) => rule.name).join(',') ?? '';
      if (validated.get(documentAST) === ruleNames) {
        setResult(NO_ERRORS);
        return;
      }
      const text = parsedFrom.get(documentAST);
      if (text === undefined) return;
      return ({ result }) => {
        if (result.length > 0) return;
        const request = (context as { request?: Request }).request;
        if (request === undefined || !mayKeep(request, text)) return;
        validated.set(documentAST, ruleNames);
        cache.keep(text, documentAST);
      };
    },
  };
}
