import { readFileSync } from 'node:fs';

/**
 * This release's version (package.json's, described in CHANGELOG.md). The start-up log and /readyz
 * say it, so that during a rolling upgrade an operator can tell which replicas run which release.
 */
export const RELEASE: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
