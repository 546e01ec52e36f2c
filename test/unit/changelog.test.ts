import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PREVIOUS_RELEASE } from '../support/previous-release.ts';

/**
 * A release is package.json's version, described first in CHANGELOG.md with its upgrade notes
 * from the release before, which the upgrade test runs (test/support/previous-release.ts).
 */
const root = new URL('../..', import.meta.url);
const changelog = readFileSync(new URL('CHANGELOG.md', root), 'utf8');
const { version } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { version: string };
const releases = [...changelog.matchAll(/^## (\d+\.\d+\.\d+)$/gm)].map((match) => match[1]);
/** The text of one release's entry, up to the next release. */
const entry = (release: string) =>
  changelog.split(/^## /m).find((part) => part.startsWith(`${release}\n`)) ?? '';

describe('releases', () => {
  it("the CHANGELOG's newest entry is package.json's version", () => {
    expect(releases[0]).toBe(version);
  });

  it('the release before is the one the upgrade test runs, named by its commit', () => {
    expect(releases[1]).toBe(PREVIOUS_RELEASE.version);
    expect(entry(PREVIOUS_RELEASE.version)).toContain(`\`${PREVIOUS_RELEASE.commit.slice(0, 7)}\``);
  });

  it('the newest entry says how to upgrade from the release before', () => {
    expect(entry(version)).toContain(`### Upgrading from ${PREVIOUS_RELEASE.version}`);
  });
});
