import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * docs/testing.md's "Which tests to run after a change" is the map from code to tests: each plugin
 * has its fast test named after it, every folder of src/ has a row, and every test a row names
 * exists. A plugin without its test, a new folder or a renamed test fails here.
 */

const ROOT = new URL('../../', import.meta.url);
const page = readFileSync(new URL('docs/testing.md', ROOT), 'utf8');
const section = page.slice(
  page.indexOf('## Which tests to run after a change'),
  page.indexOf('\n## ', page.indexOf('## Which tests to run after a change') + 3),
);
const rows = section.split('\n').filter((line) => line.startsWith('| `src/'));

describe('the map from code to tests (docs/testing.md)', () => {
  it('has a fast test for each plugin, named after it', () => {
    const plugins = readdirSync(new URL('src/plugins/', ROOT)).filter((f) => f.endsWith('.ts'));
    expect(plugins.length).toBeGreaterThan(20);
    const missing = plugins
      .map((file) => `test/unit/plugins/${file.replace(/\.ts$/, '.test.ts')}`)
      .filter((test) => !existsSync(new URL(test, ROOT)));
    expect(missing).toEqual([]);
  });

  it('has a row for every folder of src/ and for the composition files', () => {
    const folders = readdirSync(new URL('src/', ROOT), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `src/${entry.name}/`);
    const named = rows.map((row) => row.split('|')[1] ?? '');
    for (const folder of folders)
      expect(
        named.some((cell) => cell.includes(`\`${folder}`)),
        folder,
      ).toBe(true);
    const roots = readdirSync(new URL('src/', ROOT)).filter((f) => f.endsWith('.ts'));
    for (const file of roots)
      expect(
        named.some((cell) => cell.includes(`\`src/${file}\``)),
        file,
      ).toBe(true);
  });

  it('names only tests that exist', () => {
    const paths = rows.flatMap((row) => [...row.matchAll(/`(test\/[^`<>]+)`/g)].map((m) => m[1] as string));
    expect(paths.length).toBeGreaterThan(40);
    expect(paths.filter((path) => !existsSync(new URL(path, ROOT)))).toEqual([]);
  });
});
