import type { DocumentNode, GraphQLError, Source } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';

/**
 * The parse and validation cache, in place of Yoga's (`parserAndValidationCache: false` in
 * yoga.ts). Yoga's keeps 1,024 documents by text with no bound in bytes, and fills it for anyone
 * before the key is checked, while a parsed document under the token limit can hold megabytes: a
 * keyless flood could make it hold gigabytes. This one
 *
 * - keeps a document only when the request that parsed it may fill it (`mayKeep`, asked when the
 *   request is answered: a key the REST API accepted lately, which a new key's own REST calls may
 *   have just made it, or a document of the persisted-documents manifest), and only if it
 *   validated without errors (errors are never kept);
 * - is bounded by `maxBytes` of estimated heap (`retainedBytes`), an upper bound of what a kept
 *   document holds, least recently used first out;
 * - hands out the same document object for the same text while it is kept, and, for a document
 *   not kept, to the requests under way with that text (query deduplication and the cost limit's
 *   and compiled execution's WeakMaps rely on it); such a document is forgotten when the last of
 *   them is answered.
 *
 * A kept document is served to any request with the same text, keyed or not: that costs nothing
 * to keep. See docs/production.md, "Parse and validation cache", for the figures.
 */

/** Default of `maxBytes`: ~17 documents at the token limit, over a thousand of an app's screens. */
export const DOCUMENT_CACHE_MAX_BYTES = 32 * 1024 * 1024;

/**
 * Heap a parsed document holds per lexer token, its AST nodes and locations included, with room to
 * spare over the densest documents measured (docs/production.md; test/unit/document-cache.test.ts
 * holds retainedBytes to it).
 */
const BYTES_PER_TOKEN = 600;
/** Without locations (no token list to count), per character of text: a token has ≥ 2 characters. */
const BYTES_PER_CHAR_WITHOUT_LOCATIONS = 300;
/**
 * Heap an escape in a string holds (per backslash of the text): graphql-js builds an escaped
 * string's value with `+=`, so each escape leaves up to a copy of the characters before it, two
 * rope nodes and, for a character past U+00FF, a new string: 120 bytes at most on 64-bit V8, 92
 * measured for `xx\n` repeated (docs/production.md): 80 KB of `\n` escapes holds ~1.4 MB.
 */
const BYTES_PER_ESCAPE = 128;

/**
 * An upper bound of the heap `document`, parsed from `text`, holds: the text (two bytes per
 * character at most), `BYTES_PER_TOKEN` for each token of the lexer's list, which the
 * document's locations keep alive (comments included), and `BYTES_PER_ESCAPE` for each
 * backslash (one outside a string, in a comment or a block string, is counted too: it only
 * over-estimates).
 */
export function retainedBytes(text: string, document: DocumentNode): number {
  let token = document.loc?.startToken;
  // An escape has ≥ 2 characters: BYTES_PER_CHAR_WITHOUT_LOCATIONS covers it.
  if (token === undefined) return text.length * (2 + BYTES_PER_CHAR_WITHOUT_LOCATIONS);
  let tokens = 0;
  while (token) {
    tokens++;
    token = token.next ?? undefined;
  }
  let backslashes = 0;
  for (let at = text.indexOf('\\'); at !== -1; at = text.indexOf('\\', at + 1)) backslashes++;
  return text.length * 2 + tokens * BYTES_PER_TOKEN + backslashes * BYTES_PER_ESCAPE;
}

export interface DocumentCache {
  /** The estimated bytes held (retainedBytes of every document kept); at most `maxBytes`. */
  readonly bytes: number;
  readonly size: number;
  readonly maxBytes: number;
  get(text: string): DocumentNode | undefined;
  /** Keeps `document`, parsed from `text`; one larger than the whole bound is not kept. */
  keep(text: string, document: DocumentNode): void;
}

export function createDocumentCache(maxBytes: number = DOCUMENT_CACHE_MAX_BYTES): DocumentCache {
  const documents = new LRUCache<string, DocumentNode>({
    // lru-cache wants a positive bound; at 1 byte no document fits, so 0 keeps none.
    maxSize: Math.max(1, maxBytes),
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

/**
 * Characters of text of the documents shared under way (`underWay`); past it, a new document is
 * not shared. An entry leaves when its last request is answered, so this only bounds what a
 * request never answered (Yoga answers every one) could leave behind.
 */
const UNDER_WAY_MAX_CHARS = 1024 * 1024;

const textOf = (source: string | Source): string => (typeof source === 'string' ? source : source.body);

/** A document parsed for requests under way, none of which could keep it when it started. */
interface UnderWay {
  document: DocumentNode;
  requests: number;
}

/**
 * Parses and validates through `cache`. A document not kept is still shared by the requests
 * under way with the same text (query deduplication joins identical queries by their document
 * object), and forgotten when the last of them is answered. When a request is answered, its
 * document is kept if it validated and `mayKeep(request, text)` says so then: a new key's first
 * request is accepted by the time it is answered, when the REST API answered its calls.
 * Place it after every plugin that adds a validation rule: it sees the rules they added.
 */
export function useDocumentCache(
  cache: DocumentCache,
  mayKeep: (request: Request, text: string) => boolean,
  /** The validation rules (their names, as Yoga's cache keys validation) each document passed; the hot path reads it. */
  validated: WeakMap<DocumentNode, string> = new WeakMap(),
): Plugin {
  const underWay = new Map<string, UnderWay>();
  let underWayChars = 0;
  const forget = (text: string) => {
    underWay.delete(text);
    underWayChars -= text.length;
  };
  // The document each request parsed or shared, not kept when it started.
  const parsedFor = new WeakMap<Request, { text: string; document: DocumentNode; shared: UnderWay | null }>();
  const share = (text: string, document: DocumentNode): UnderWay | null => {
    if (underWayChars + text.length > UNDER_WAY_MAX_CHARS) return null;
    const entry = { document, requests: 0 };
    underWay.set(text, entry);
    underWayChars += text.length;
    return entry;
  };
  const track = (
    request: Request | undefined,
    text: string,
    document: DocumentNode,
    shared: UnderWay | null,
  ) => {
    if (request === undefined || parsedFor.has(request)) return;
    if (shared) shared.requests++;
    parsedFor.set(request, { text, document, shared });
  };
  return {
    onParse({ context, params, setParsedDocument }) {
      const text = textOf(params.source);
      const kept = cache.get(text);
      if (kept !== undefined) {
        setParsedDocument(kept);
        return;
      }
      const request = (context as { request?: Request }).request;
      const entry = underWay.get(text);
      if (entry) {
        setParsedDocument(entry.document);
        track(request, text, entry.document, entry);
        return;
      }
      return ({ result }) => {
        if (!result || result instanceof Error) return;
        const parsed = result as DocumentNode;
        track(request, text, parsed, request === undefined ? null : share(text, parsed));
      };
    },
    onValidate({ params: { schema, documentAST, rules }, setResult }) {
      if (schema == null) return;
      const ruleNames = rules?.map((rule: { name: string }) => rule.name).join(',') ?? '';
      if (validated.get(documentAST) === ruleNames) {
        setResult(NO_ERRORS);
        return;
      }
      return ({ result }) => {
        if (result.length === 0) validated.set(documentAST, ruleNames);
      };
    },
    onResponse({ request }) {
      const parsed = parsedFor.get(request);
      if (parsed === undefined) return;
      parsedFor.delete(request);
      const { text, document, shared } = parsed;
      if (validated.has(document) && cache.get(text) === undefined && mayKeep(request, text)) {
        cache.keep(text, document);
      }
      if (shared && --shared.requests === 0 && underWay.get(text) === shared) forget(text);
    },
  };
}
