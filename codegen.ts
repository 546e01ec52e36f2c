import type { CodegenConfig } from '@graphql-codegen/cli';
import { addTypenameSelectionDocumentTransform } from '@graphql-codegen/client-preset';

// What every typed-document target shares: ES module imports, string scalars, no enums at runtime.
const typedDocuments = {
  emitLegacyCommonJSImports: false,
  useTypeImports: true,
  enumsAsTypes: true,
  scalars: { Decimal: 'string', DateTime: 'string' },
  strictScalars: true,
};

/**
 * Generated from the checked-in SDL: typed documents for the example operations (schema/operations),
 * which the tests use as a typed client; each example app's own (examples/apollo, examples/urql);
 * and the schema in the two shapes client caches take. `npm test` fails when any of it is stale.
 */
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  ignoreNoDocuments: false,
  generates: {
    // Apollo Client's InMemoryCache needs the union and interface members (possibleTypes), or it
    // drops the fields selected through `... on UserError` from the mutation's typed errors.
    'schema/possible-types.json': {
      plugins: ['fragment-matcher'],
      config: { apolloClientVersion: 3 },
    },
    'test/generated/': {
      documents: ['schema/operations/*.graphql'],
      preset: 'client',
      // persisted-documents.json: the trusted-documents manifest (sha256 of each operation → its text),
      // which PERSISTED_DOCUMENTS loads; each typed document carries its hash.
      presetConfig: { fragmentMasking: false, persistedDocuments: { hashAlgorithm: 'sha256' } },
      config: typedDocuments,
    },
    // The schema as introspection JSON, minified: what urql's graphcache takes as `schema`.
    'schema/introspection.json': {
      plugins: ['introspection'],
      config: { minify: true },
    },
    // examples/apollo: an app's own operations, typed documents and manifest. `__typename` is
    // added to every selection set as Apollo Client adds it before sending, so the manifest's text
    // is what Apollo sends (and what its cache needs back when it asks by hash alone).
    'examples/apollo/generated/': {
      documents: ['examples/apollo/operations/*.graphql'],
      preset: 'client',
      documentTransforms: [addTypenameSelectionDocumentTransform],
      presetConfig: { fragmentMasking: false, persistedDocuments: { hashAlgorithm: 'sha256' } },
      config: typedDocuments,
    },
    'examples/apollo/generated/possible-types.json': {
      plugins: ['fragment-matcher'],
      config: { apolloClientVersion: 3 },
    },
    // examples/urql: typed documents only (urql adds `__typename` itself and needs no manifest).
    'examples/urql/generated/': {
      documents: ['examples/urql/operations/*.graphql'],
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: typedDocuments,
    },
  },
};

export default config;
