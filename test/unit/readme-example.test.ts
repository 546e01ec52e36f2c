import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

// The README shows examples/wallet-app.ts whole; the file is run by a test, the copy must be it.
it("the README's client example is examples/wallet-app.ts, verbatim", () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const shown =
    /<!-- examples\/wallet-app\.ts -->\n```ts\n([\s\S]*?)```\n<!-- \/examples\/wallet-app\.ts -->/.exec(
      readme,
    )?.[1];
  expect(shown).toBe(readFileSync(new URL('../../examples/wallet-app.ts', import.meta.url), 'utf8'));
});
