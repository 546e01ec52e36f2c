import { readdirSync, readFileSync } from 'node:fs';

const DIRECTORY = new URL('../schema/operations/', import.meta.url);

/**
 * The example operations in schema/operations/*.graphql, joined into one document: GraphiQL's
 * default tab. The same files feed codegen and the tests' typed client.
 */
export function loadExampleOperations(): string {
  return readdirSync(DIRECTORY)
    .filter((name) => name.endsWith('.graphql'))
    .sort()
    .map((name) => readFileSync(new URL(name, DIRECTORY), 'utf8').trim())
    .join('\n\n');
}
