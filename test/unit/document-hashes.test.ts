import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { addTypenameToDocument } from '@apollo/client/utilities';
import { type DocumentNode, parse, print } from 'graphql';
import { describe, expect, it } from 'vitest';
import * as apolloExample from '../../examples/apollo/generated/graphql.ts';
import {
  codegenHashesOf,
  printAsCodegen,
  sha256,
  withoutApolloTypenames,
} from '../../src/document-hashes.ts';
import * as generated from '../generated/graphql.ts';

// codegen's own normalisation, which its package does not export: from the file beside its entry.
const require = createRequire(import.meta.url);
const { normalizeAndPrintDocumentNode } = require(
  join(dirname(require.resolve('@graphql-codegen/client-preset')), 'persisted-documents.js'),
) as { normalizeAndPrintDocumentNode: (document: DocumentNode) => string };

// The typed documents codegen wrote, each with the hash of its manifest entry.
const documentsOf = (module: Record<string, unknown>) =>
  Object.entries(module)
    .filter(([name]) => name.endsWith('Document'))
    .map(([name, document]) => ({
      name,
      document: document as DocumentNode,
      hash: ((document as { __meta__?: { hash?: string } }).__meta__?.hash ?? '').replace(/^sha256:/, ''),
    }));
const manifestOf = (path: string) =>
  JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as Record<string, string>;

// What Apollo Client 4 sends with a typed document: its print after adding `__typename`.
const apolloPrint = (document: DocumentNode) => print(addTypenameToDocument(document));

describe.each([
  {
    app: 'schema/operations (test/generated)',
    module: generated,
    manifest: '../generated/persisted-documents.json',
  },
  {
    app: 'examples/apollo (addTypenameSelectionDocumentTransform)',
    module: apolloExample,
    manifest: '../../examples/apollo/generated/persisted-documents.json',
  },
])('the hashes codegen gave the documents of $app', ({ module, manifest }) => {
  const documents = documentsOf(module);
  const texts = manifestOf(manifest);

  it('are the sha256 of printAsCodegen of the document as written', () => {
    expect(documents.length).toBeGreaterThan(3);
    for (const { document, hash } of documents) {
      const text = printAsCodegen(parse(print(document)));
      expect(texts[`sha256:${hash}`]).toBe(text);
      expect(sha256(text)).toBe(hash);
    }
  });

  it("are found from Apollo Client's own print of the document, which does not hash to them itself", () => {
    for (const { document, hash } of documents) {
      const sent = apolloPrint(document);
      expect(sha256(sent)).not.toBe(hash);
      expect(codegenHashesOf(sent, 10_000)).toContain(hash);
    }
  });
});

describe('printAsCodegen', () => {
  // Documents with what codegen's normalisation removes or reorders.
  const samples = [
    'query A($b: Int, $a: String) { wallets(first: $b, after: $a) @connection(key: "w") { totalCount nodes { id local @client } } }',
    'query B { ...F ... on Query @client { x } node(id: "1") { ... on Wallet { address } id } } fragment F on Query { wallets { totalCount } }',
    'mutation C($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { ... on UserError { message code } __typename } }',
    'subscription D { withdrawalIntentUpdated(id: "x") { status id } }',
  ];

  it("is @graphql-codegen/client-preset's own normalizeAndPrintDocumentNode", () => {
    for (const text of samples) {
      expect(printAsCodegen(parse(text))).toBe(normalizeAndPrintDocumentNode(parse(text)));
    }
  });
});

describe('withoutApolloTypenames', () => {
  it("undoes Apollo's addTypenameToDocument on every example operation", () => {
    for (const { document } of [...documentsOf(generated), ...documentsOf(apolloExample)]) {
      expect(print(withoutApolloTypenames(addTypenameToDocument(document)))).toBe(print(document));
    }
  });

  it("keeps a __typename that Apollo would not have added: the operation's own, an alias, or beside another __ field", () => {
    for (const text of [
      '{ __typename wallets { totalCount } }',
      '{ wallets { kind: __typename } }',
      '{ wallets { __type(name: "Wallet") { name } __typename } }',
    ]) {
      expect(print(withoutApolloTypenames(parse(text)))).toBe(print(parse(text)));
    }
  });
});

describe('codegenHashesOf', () => {
  it('names no hash for a text that does not parse, or has more tokens than allowed', () => {
    expect(codegenHashesOf('{ wallets(', 100)).toEqual([]);
    expect(codegenHashesOf('{ a b c d e f }', 5)).toEqual([]);
  });
});
