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
