import type { DocumentNode, GraphQLError, Source } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';

/** Default of `maxBytes` (DOCUMENT_CACHE_MAX_BYTES). */
export const DOCUMENT_CACHE_MAX_BYTES = 32 * 1024 * 1024;

/** Heap per lexer token (AST nodes and locations), above the densest documents measured. */
const BYTES_PER_TOKEN = 600;
/** Without locations (no token list to count), per character of text: a token has ≥ 2 characters. */
const BYTES_PER_CHAR_WITHOUT_LOCATIONS = 300;
/** Heap an escape in a string may hold (graphql-js builds escaped strings with `+=`). */
const BYTES_PER_ESCAPE = 128;

/**
 * An upper bound of the heap `document`, parsed from `text`, holds: two bytes per character, plus
 * BYTES_PER_TOKEN per token of the lexer's list (comments included) and BYTES_PER_ESCAPE per
 * backslash anywhere (docs/production.md#parse-and-validation-cache-what-an-outsider-can-make-the-gateway-keep).
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

/** Characters of text shared under way; bounds only what a request never answered could leave. */
const UNDER_WAY_MAX_CHARS = 1024 * 1024;

const textOf = (source: string | Source): string => (typeof source === 'string' ? source : source.body);

/** A document parsed for requests under way, none of which could keep it when it started. */
interface UnderWay {
  document: DocumentNode;
  requests: number;
}

export interface DocumentCacheOptions {
  /** Where documents are kept (createDocumentCache); the hot path reads the same. */
  cache: DocumentCache;
  /** Whether a request's document may be kept once it is answered: a known-good key's, or the manifest's. */
  mayKeep: (request: Request, text: string) => boolean;
  /** The validation rules (their names) each document passed; the hot path reads it. @default a map of its own */
  validated?: WeakMap<DocumentNode, string>;
}

/**
 * The parse and validation cache, in place of Yoga's (docs/production.md, Parse and validation
 * cache). The same text gets the same document object, which query deduplication, the cost limit
 * and compiled execution key their work by: kept in `cache`, or shared by the requests under way
 * and forgotten with the last. A document is kept when its request is answered, if it validated
 * and `mayKeep(request, text)` then says so. Comes after every plugin that adds a validation rule.
 */
export function useDocumentCache({
  cache,
  mayKeep,
  validated = new WeakMap(),
}: DocumentCacheOptions): Plugin {
  const underWay = new Map<string, UnderWay>();
  let underWayChars = 0;
  const forget = (text: string) => {
    underWay.delete(text);
    underWayChars -= text.length;
  };
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
