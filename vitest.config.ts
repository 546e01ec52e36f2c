import { defineConfig } from 'vitest/config';
import { SlowestFirst } from './test/support/sequencer.ts';

// Three tiers: unit (pure code), integration (in-process against a real sandbox on port 0),
// e2e (the started processes). `npm test` runs all of them, four files at a time: most files
// wait on processes, sockets and timers rather than on the CPU, so on a 2-core machine four
// keep both cores busy (docs/testing.md has the figures). No verdict may depend on how fast or busy
// the machine is: `npm run test:busy` runs the suite beside a CPU hog to show it.
//
// Unit and integration files share one module graph per worker (`isolate: false`): loading the
// gateway's modules and building its schema once per worker instead of once per file takes the
// integration tier from about 60 % import time to 4 %. Each file builds its own gateways, sandboxes
// and Redis, and restores what it spies on; a file that replaces a module (`vi.mock`) needs a
// graph of its own, so it is listed here.
const MOCKS_MODULES = ['test/integration/gateway/outsider-memory.test.ts'];

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS (main) and ESM (module). Node, which loads Pothos and Yoga, picks CJS;
    // Vite would pick ESM for our sources, giving two graphql realms. Pin everything to the one Node uses.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    // Searches every log line of the run for API keys once all files have run.
    globalSetup: ['test/global-setup.ts'],
    maxWorkers: 4,
    // The slowest files first, so that none of them is the last one running.
    sequence: { sequencer: SlowestFirst },
    // `expect.poll` waits for something that must happen; how soon depends on the machine, so the
    // bound is generous: a poll fails when the thing does not happen, not when the machine is busy.
    expect: { poll: { timeout: 20_000 } },
    projects: [
      {
        extends: true,
        // A test's time limit guards against a hang, not a slow machine: vitest's 5 s is too close,
        // and an integration test that takes 15 s alone may take 40 s beside a CPU hog.
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false, testTimeout: 60_000 },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          exclude: MOCKS_MODULES,
          testTimeout: 60_000,
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: 'integration-isolated', include: MOCKS_MODULES, testTimeout: 60_000 },
      },
      {
        extends: true,
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 60_000 },
      },
    ],
  },
});
