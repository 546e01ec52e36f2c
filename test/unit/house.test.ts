import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The house rules of docs/architecture.md ("Project layout"): rooms that fit a first read, the
 * composition files alone at src/'s root, and each plugin file named for its main export.
 */

const SRC = new URL('../../src/', import.meta.url).pathname;
const MAX_LINES = 400;
const COMPOSITION = ['context.ts', 'main.ts', 'runtime.ts', 'server.ts', 'yoga.ts'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** `query-limits` → `QueryLimits`; capitals of acronyms are the export's own (`CSRF`, `URL`). */
const pascal = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_m, _dash, letter: string) => letter.toUpperCase());

describe('the house', () => {
  it(`keeps every file of src/ within ${MAX_LINES} lines`, () => {
    const long = sources(SRC)
      .map((path) => ({
        path: relative(SRC, path),
        lines: readFileSync(path, 'utf8').split('\n').length - 1,
      }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it("holds only the composition files at src/'s root", () => {
    const loose = readdirSync(SRC).filter((name) => name.endsWith('.ts'));
    expect(loose.sort()).toEqual(COMPOSITION);
  });

  it("names every file of src/ in docs/architecture.md's layout", () => {
    const page = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
    const start = page.indexOf('## Project layout');
    const layout = page.slice(start, page.indexOf('```\n\n', start));
    const unnamed = sources(SRC)
      .map((path) => relative(SRC, path))
      .filter(
        (path) =>
          !new RegExp(`(^|[\\s,(/])${path.split('/').at(-1)?.replace('.', '\\.')}\\b`, 'm').test(layout),
      );
    expect(unnamed).toEqual([]);
  });

  it('names only files that exist in "Making a change"', () => {
    const page = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
    const start = page.indexOf('## Making a change');
    const section = page.slice(start, page.indexOf('\n## ', start + 3));
    const paths = [...section.matchAll(/`((?:src|test|docs|schema)\/[^`\s]+)`/g)].map((m) => m[1] as string);
    expect(paths.length).toBeGreaterThan(20);
    expect(paths.filter((path) => !existsSync(new URL(`../../${path}`, import.meta.url)))).toEqual([]);
  });

  it('names each plugin file for its main export (useX, X or x)', () => {
    const misnamed = readdirSync(join(SRC, 'plugins'))
      .filter((file) => file.endsWith('.ts'))
      .filter((file) => {
        const name = pascal(file.replace(/\.ts$/, '')).toLowerCase();
        const text = readFileSync(join(SRC, 'plugins', file), 'utf8');
        const exported = [...text.matchAll(/^export (?:async )?(?:function|class|const) (\w+)/gm)].map((m) =>
          (m[1] as string).toLowerCase(),
        );
        return !exported.some((e) => e === `use${name}` || e === name);
      });
    expect(misnamed).toEqual([]);
  });
});
