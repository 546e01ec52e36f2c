/**
 * relay-compiler's artifacts import each other without an extension (`./X.graphql`), as bundlers
 * resolve them; Node does not. `node --import ./examples/relay/resolve-artifacts.ts …` (the
 * `example:relay` script) adds the `.ts` for them. Vitest (Vite) resolves them as it is.
 */
import { registerHooks } from 'node:module';

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier.startsWith('.') && specifier.endsWith('.graphql')) {
      return nextResolve(`${specifier}.ts`, context);
    }
    return nextResolve(specifier, context);
  },
});
