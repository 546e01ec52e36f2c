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
 * The hashes a client may put beside a document's text in an APQ request: the text's sha256, or
 * codegen's (`__meta__.hash`, the sha256 of its normalised print) beside Apollo's own print with
 * its `__typename`s. These functions get from the text sent back to the text codegen hashed
 * (docs/trusted-documents.md).
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
 * The document before Apollo Client's `addTypenameToDocument` (see withApolloTypenames): a selection
 * set ending with its only `__`-field, a bare `__typename`, loses it. One the app wrote so matches
 * through its plain print instead, unless Apollo added one elsewhere too.
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
 * (printed as sent, or without Apollo's `__typename`s), the document codegen hashed with Apollo's
 * `__typename`s added, which depends on the hash alone, never on the sender's text; otherwise (or
 * past `maxTokens`, or unparsable) undefined.
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
