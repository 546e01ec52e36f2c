import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * Typed documents for the example operations (schema/operations), generated from the checked-in
 * SDL. The tests use them as a typed client; `npm test` fails when they are stale.
 */
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  documents: ['schema/operations/*.graphql'],
  ignoreNoDocuments: false,
  generates: {
    // Apollo Client's InMemoryCache needs the union and interface members (possibleTypes), or it
    // drops the fields selected through `... on UserError` from the mutation's typed errors.
    'schema/possible-types.json': {
      plugins: ['fragment-matcher'],
      config: { apolloClientVersion: 3 },
    },
    'test/generated/': {
      preset: 'client',
      // persisted-documents.json: the trusted-documents manifest (sha256 of each operation → its text),
      // which PERSISTED_DOCUMENTS loads; each typed document carries its hash.
      presetConfig: { fragmentMasking: false, persistedDocuments: { hashAlgorithm: 'sha256' } },
      config: {
        emitLegacyCommonJSImports: false,
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: { Decimal: 'string', DateTime: 'string' },
        strictScalars: true,
      },
    },
  },
};

export default config;
