import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The order files start in. On a fresh clone vitest has no durations of its own (they live in
 * node_modules/.vite, which `npm ci` removes), and falls back to file size, which would leave the
 * container build (minutes, mostly in its beforeAll) to start late and finish last. So the files
 * measured slowest (docs/testing.md, "Time") start first, in this order, and the rest follow by
 * tier (e2e, then the property tests, then integration, then unit) and size, as vitest orders
 * them. Order only: what runs, and every verdict, is the same in any order.
 */
const SLOWEST = [
  'test/e2e/container.test.ts',
  'test/e2e/rolling-restart.test.ts',
  'test/integration/gateway/differential.property.test.ts',
  'test/e2e/graphiql-browser.test.ts',
  'test/e2e/start.test.ts',
  'test/integration/fleet/exactly-once.property.test.ts',
  'test/e2e/examples.test.ts',
  'test/e2e/upgrade.test.ts',
];

const tier = (file: string) =>
  file.startsWith('test/e2e/')
    ? 0
    : file.includes('.property.')
      ? 1
      : file.startsWith('test/integration/')
        ? 2
        : 3;

export class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const name = (spec: TestSpecification) => relative(spec.project.config.root, spec.moduleId);
    const rank = (spec: TestSpecification) => {
      const slow = SLOWEST.indexOf(name(spec));
      return slow === -1 ? SLOWEST.length + tier(name(spec)) : slow;
    };
    // Array.prototype.sort is stable: within a rank, vitest's own order stays.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
