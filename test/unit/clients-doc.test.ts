import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

// docs/clients.md shows each example's data layer whole between `<!-- path -->` markers; the files
// are run by tests and by `npm run example:*`, so each copy must be its file.
it("docs/clients.md's client examples are examples/apollo, urql and relay's data layers (and Relay's network layer), verbatim", () => {
  const page = readFileSync(new URL('../../docs/clients.md', import.meta.url), 'utf8');
  const shown = [...page.matchAll(/<!-- (examples\/\S+) -->\n```ts\n([\s\S]*?)```\n<!-- \/\1 -->/g)];
  expect(shown.map((match) => match[1])).toEqual([
    'examples/apollo/wallet-client.ts',
    'examples/urql/wallet-client.ts',
    'examples/relay/network.ts',
    'examples/relay/wallet-client.ts',
  ]);
  for (const [, path, copy] of shown) {
    expect(copy, path).toBe(readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8'));
  }
});

it("docs/clients.md's Packages row names the versions package.json pins", () => {
  const page = readFileSync(new URL('../../docs/clients.md', import.meta.url), 'utf8');
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  const pinned: Record<string, string> = { ...manifest.dependencies, ...manifest.devDependencies };
  const row = page.split('\n').find((line) => line.startsWith('| Packages'));
  const named = [...(row ?? '').matchAll(/`(@?[a-z][\w./-]*)` (\d+\.\d+\.\d+)/g)];
  expect(named.length).toBeGreaterThan(10);
  for (const [, name, version] of named)
    expect(`${name} ${pinned[name as string]}`).toBe(`${name} ${version}`);
});
