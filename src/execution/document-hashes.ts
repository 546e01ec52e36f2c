import { createHash } from 'node:crypto';
import { printExecutableGraphQLDocument } from '@graphql-tools/documents';
import {
  type DirectiveNode,
  type DocumentNode,
  type FieldNode,
  Kind,
  parse,
  print,
  type SelectionNode,
  visit,
} from 'graphql';

/**
 * The hashes a client may put beside a document's text in an APQ request. Apollo's
 * PersistedQueryLink hashes whatever `generateHash` returns, and an app that runs with trusted
 * documents returns the hash codegen wrote into its typed document (`__meta__.hash`). That is the
 * sha256 of codegen's normalised print of the document, while the text the link sends with it is
 * Apollo's own print, after Apollo added `__typename` to every selection set. These functions get
 * from the text the client sent back to the text codegen hashed.
 */

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A document id as manifests and requests write it: `sha256:<hex>`, or the bare hex. */
export const DOCUMENT_ID = /^(?:sha256:)?([0-9a-f]{64})$/;

const named =
  (name: string) =>
  (node: { readonly directives?: readonly DirectiveNode[] }): boolean =>
    node.directives?.some((directive) => directive.name.value === name) ?? false;
const isClient = named('client');

/**
 * The text `@graphql-codegen/client-preset` hashes for a persisted document (its
 * `normalizeAndPrintDocumentNode`): `@client` fields and fragments removed, `@connection`
 * directives removed, then `printExecutableGraphQLDocument` (definitions, selections and arguments
 * sorted, whitespace collapsed). test/unit/document-hashes.test.ts holds it to codegen's manifests.
 */
export function printAsCodegen(document: DocumentNode): string {
  const sanitised = visit(document, {
    Field: (node) => (isClient(node) ? null : undefined),
    FragmentSpread: (node) => (isClient(node) ? null : undefined),
    InlineFragment: (node) => (isClient(node) ? null : undefined),
    Directive: (node) => (node.name.value === 'connection' ? null : undefined),
  });
  return printExecutableGraphQLDocument(sanitised);
}

const isBareTypename = (selection: SelectionNode | undefined): boolean =>
  selection?.kind === Kind.FIELD &&
  selection.name.value === '__typename' &&
  !selection.alias &&
  !selection.arguments?.length &&
  !selection.directives?.length &&
  !selection.selectionSet;

/**
 * The document before Apollo Client's `addTypenameToDocument`, which appends a bare `__typename` to
 * every selection set below the operation's own that has no field starting with `__` (and is not
 * under an `@export` field). So a selection set ending with the only such field loses it here.
 * A selection set the app itself wrote ending with a bare `__typename` loses it too; that document
 * then matches through its plain print instead, unless Apollo also added one elsewhere (codegen's
 * `addTypenameSelectionDocumentTransform` avoids the question: Apollo then adds nothing).
 */
export function withoutApolloTypenames(document: DocumentNode): DocumentNode {
  return visit(document, {
    SelectionSet(node, _key, parent) {
      const owner = parent as { kind?: string } | undefined;
      if (owner?.kind === Kind.OPERATION_DEFINITION) return undefined;
      if (owner?.kind === Kind.FIELD && named('export')(owner as { directives?: DirectiveNode[] }))
        return undefined;
      const { selections } = node;
      if (!isBareTypename(selections.at(-1))) return undefined;
      const rest = selections.slice(0, -1);
      if (rest.some((s) => s.kind === Kind.FIELD && s.name.value.startsWith('__'))) return undefined;
      return { ...node, selections: rest };
    },
  });
}

const TYPENAME: FieldNode = { kind: Kind.FIELD, name: { kind: Kind.NAME, value: '__typename' } };

/**
 * Apollo Client's `addTypenameToDocument`, which withoutApolloTypenames undoes: a bare `__typename`
 * at the end of every selection set below the operation's own that has no field starting with
 * `__` (and is not under an `@export` field). urql's cache adds the same.
 */
export function withApolloTypenames(document: DocumentNode): DocumentNode {
  return visit(document, {
    SelectionSet(node, _key, parent) {
      const owner = parent as { kind?: string } | undefined;
      if (owner?.kind === Kind.OPERATION_DEFINITION) return undefined;
      if (owner?.kind === Kind.FIELD && named('export')(owner as { directives?: DirectiveNode[] }))
        return undefined;
      if (node.selections.some((s) => s.kind === Kind.FIELD && s.name.value.startsWith('__')))
        return undefined;
      return { ...node, selections: [...node.selections, TYPENAME] };
    },
  });
}

/**
 * What an APQ registration under codegen's hash stores: when `hash` is codegen's hash of `text`
 * (of its print as sent, or of its print before Apollo added its `__typename`s), the document that
 * codegen hashed, with Apollo's `__typename`s added; otherwise undefined.
 *
 * What is stored depends on the hash alone, never on the text that came with it. The registry is
 * shared by every caller, and many texts print to the same document (with `@client` fields, with
 * or without `__typename`s, in any order): storing the sender's text would let anyone who knows
 * an app's hash register, before that app does, a text that fails or lacks the `__typename`s its
 * cache needs, for every merchant's app. The `__typename`s are added because Apollo's and urql's
 * caches need them and they change no other field. Empty when the text does not parse (or has
 * more than `maxTokens` tokens).
 */
export function codegenRegistration(text: string, hash: string, maxTokens: number): string | undefined {
  let document: DocumentNode;
  try {
    document = parse(text, { noLocation: true, maxTokens });
  } catch {
    return undefined;
  }
  for (const candidate of [document, withoutApolloTypenames(document)]) {
    const printed = printAsCodegen(candidate);
    if (sha256(printed) === hash) return print(withApolloTypenames(parse(printed, { noLocation: true })));
  }
  return undefined;
}
