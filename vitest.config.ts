import { defineConfig } from 'vitest/config';

// Three tiers: unit (pure code), integration (in-process against a real sandbox on port 0),
// e2e (the started processes). `npm test` runs all of them.
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { test: { name: 'integration', include: ['test/integration/**/*.test.ts'], testTimeout: 30_000 } },
      { test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 60_000 } },
    ],
  },
});
