import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { addTypenameToDocument } from '@apollo/client/utilities';
import { type DocumentNode, parse, print } from 'graphql';
import { describe, expect, it } from 'vitest';
import * as apolloExample from '../../examples/apollo/generated/graphql.ts';
import {
  codegenRegistration,
  printAsCodegen,
  sha256,
  withApolloTypenames,
  withoutApolloTypenames,
} from '../../src/execution/document-hashes.ts';
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
      // What is registered: the document codegen hashed, with Apollo's __typenames.
      expect(codegenRegistration(sent, hash, 10_000)).toBe(
        print(withApolloTypenames(parse(texts[`sha256:${hash}`] ?? ''))),
      );
    }
  });

  it('registers what the hash alone decides, whatever text came with it (no poisoning of the shared registry)', () => {
    for (const { document, hash } of documents) {
      const canonical = codegenRegistration(apolloPrint(document), hash, 10_000);
      // Texts that print to the same document: codegen's own, without any __typename, with a
      // field only the client knows (`@client`, which codegen drops before hashing).
      const variants = [
        texts[`sha256:${hash}`] ?? '',
        print(document),
        print(withoutApolloTypenames(parse(print(document)))),
        print(document).replace(/\{\n/, '{\n  injected @client\n'),
      ];
      for (const variant of variants) {
        const registered = codegenRegistration(variant, hash, 10_000);
        if (registered !== undefined) expect(registered).toBe(canonical);
      }
      expect(codegenRegistration(variants[3] ?? '', hash, 10_000)).toBe(canonical);
      expect(canonical).not.toContain('@client');
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

describe('codegenRegistration', () => {
  it('registers nothing for a text that does not parse, or has more tokens than allowed', () => {
    const hash = sha256(printAsCodegen(parse('{ a b c d e f }')));
    expect(codegenRegistration('{ wallets(', hash, 100)).toBeUndefined();
    expect(codegenRegistration('{ a b c d e f }', hash, 5)).toBeUndefined();
    expect(codegenRegistration('{ a b c d e f }', hash, 100)).toBe(print(parse('{ a b c d e f }')));
  });
});
