/**
 * Prints the schema's SDL to schema/schema.graphql; with --check, fails when the file differs,
 * so a schema change cannot land without its reviewed SDL.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { printSchema } from 'graphql';
import { schema } from '../src/schema/index.ts';

const target = new URL('../schema/schema.graphql', import.meta.url);
const sdl = `${printSchema(schema)}\n`;

if (process.argv.includes('--check')) {
  const current = await readFile(target, 'utf8').catch(() => '');
  if (current !== sdl) {
    console.error('schema/schema.graphql is out of date: run `npm run schema:print` and commit the result.');
    process.exit(1);
  }
  console.log('schema/schema.graphql is up to date.');
} else {
  await writeFile(target, sdl);
  console.log('Wrote schema/schema.graphql');
}
