import { defineConfig } from 'vitest/config';

// Three tiers: unit (pure code), integration (in-process against a real sandbox on port 0),
// e2e (the started processes). `npm test` runs all of them.
export default defineConfig({
  resolve: {
    // graphql 16 ships CJS (main) and ESM (module). Node, which loads Pothos and Yoga, picks CJS;
    // Vite would pick ESM for our sources, giving two graphql realms. Pin everything to the one Node uses.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    // Searches every log line of the run for API keys once all files have run.
    globalSetup: ['test/global-setup.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts'], testTimeout: 30_000 },
      },
      {
        extends: true,
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 60_000 },
      },
    ],
  },
});
