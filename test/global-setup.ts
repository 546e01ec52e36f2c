import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { DEMO_KEYS } from '../src/sandbox/seed.ts';
import { ensureChromium } from './support/chromium.ts';
import { ensureContainerTools } from './support/container.ts';
import { ensureHaproxy } from './support/haproxy.ts';
import { findKeyLeaks } from './support/key-leaks.ts';
import { ensureRedisServer } from './support/redis.ts';

declare module 'vitest' {
  interface ProvidedContext {
    suiteLogDir: string;
  }
}

/**
 * Issue 5's "capture logs over the whole suite and search them": every gateway the tests build
 * logs (at debug level, through src/shared/logger.ts) into one directory, e2e processes add their output,
 * and once all files have run the teardown fails the run if any key shows up in any of it.
 *
 * The only lines left out are the banner `npm start` prints in sandbox mode, which shows the
 * sandbox's public demo key on purpose.
 */
const BANNER = /^(Demo key \(|Try: curl -H "Authorization: Bearer mw_sandbox_demo_)/;

export default function setup(project: TestProject): () => void {
  // The fleet tests start their own redis-server; a fresh machine gets it installed here, once,
  // outside any test's time limit.
  ensureRedisServer();
  // So does Chromium, for the tests that drive GraphiQL in a real browser.
  ensureChromium();
  // And buildah and mmdebstrap, for the test that builds and runs the Dockerfile's image.
  ensureContainerTools();
  // And haproxy, for the rolling restarts behind the repository's load-balancer example.
  ensureHaproxy();
  const dir = mkdtempSync(join(tmpdir(), 'gateway-suite-logs-'));
  project.provide('suiteLogDir', dir);
  return () => scan(dir);
}

function scan(dir: string): void {
  const names = readdirSync(dir);
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  const keys = [
    ...Object.values(DEMO_KEYS),
    ...names.filter((n) => n.startsWith('keys-')).flatMap((n) => read(n).split('\n')),
  ];
  const files = names
    .filter((n) => !n.startsWith('keys-'))
    .map((name) => ({
      name,
      text: read(name)
        .split('\n')
        .filter((line) => !BANNER.test(line.trim()))
        .join('\n'),
    }));
  const lines = files.reduce((sum, f) => sum + f.text.split('\n').length, 0);
  const leaks = findKeyLeaks(files, keys);
  rmSync(dir, { recursive: true, force: true });
  if (leaks.length > 0) {
    throw new Error(
      `API keys found in the suite's logs:\n${leaks
        .slice(0, 20)
        .map((l) => `  ${l.file}:${l.line}: ${l.match}`)
        .join('\n')}`,
    );
  }
  console.log(
    `Key scan: ${lines} log lines in ${files.length} files, ${new Set(keys).size} keys: none found.`,
  );
}
