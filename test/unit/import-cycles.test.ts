import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The modules of src/ import one another without a circle, type imports included: a module can be
 * read (and tested) knowing only what it imports. A circle usually means a type lives in the wrong
 * module (docs/architecture.md, Project layout).
 */

const SRC = resolve(import.meta.dirname, '../../src');
const IMPORT = /^(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]/gm;

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return modules(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Each module's relative imports within src/. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(IMPORT)].map((m) => resolve(dirname(file), m[1] as string));
    graph.set(
      file,
      targets.filter((t) => t.startsWith(SRC)),
    );
  }
  return graph;
}

/** Every circle, each once, as a list of paths relative to src/ (depth-first, colouring). */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') {
        cycles.push(stack.slice(stack.indexOf(next)).map((p) => relative(SRC, p)));
      } else if (!state.has(next)) {
        visit(next);
      }
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

describe('imports', () => {
  it('no module of src/ imports itself through others', () => {
    expect(importCycles(importGraph(modules(SRC)))).toEqual([]);
  });

  it('the check finds a circle (type imports count)', () => {
    const a = join(SRC, 'a.ts');
    const b = join(SRC, 'b.ts');
    const c = join(SRC, 'c.ts');
    const graph = new Map([
      [a, [b]],
      [b, [c]],
      [c, [a]],
    ]);
    expect(importCycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    const typeOnly = "import type { Rule } from './rules.ts';\nexport { x } from './x.ts';";
    expect([...typeOnly.matchAll(IMPORT)].map((m) => m[1])).toEqual(['./rules.ts', './x.ts']);
  });
});
