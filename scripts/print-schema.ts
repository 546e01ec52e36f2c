/**
 * Prints the schema's SDL to schema/schema.graphql, its Federation subgraph SDL (what
 * `_service { sdl }` answers with FEDERATION=true; docs/supergraph.md) to schema/subgraph.graphql,
 * and the parts of docs/schema.md printed from the schema (scripts/schema-docs.ts);
 * with --check, fails when a file differs, so a schema change cannot land without its reviewed SDL.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { printSubgraphSchema } from '@apollo/subgraph';
import { printSchema } from 'graphql';
import { schema, subgraphSchema } from '../src/schema/index.ts';
import { schemaPage } from './schema-docs.ts';

const docsPage = new URL('../docs/schema.md', import.meta.url);
const operations = new URL('../schema/operations/', import.meta.url);

const files = [
  { target: new URL('../schema/schema.graphql', import.meta.url), sdl: `${printSchema(schema)}\n` },
  {
    target: new URL('../schema/subgraph.graphql', import.meta.url),
    sdl: `${printSubgraphSchema(subgraphSchema)}\n`,
  },
  {
    target: docsPage,
    sdl: schemaPage(await readFile(docsPage, 'utf8'), schema, operations),
  },
];

let stale = false;
for (const { target, sdl } of files) {
  const name = target.pathname.split('/').slice(-2).join('/');
  if (process.argv.includes('--check')) {
    const current = await readFile(target, 'utf8').catch(() => '');
    if (current !== sdl) {
      console.error(`${name} is out of date: run \`npm run schema:print\` and commit the result.`);
      stale = true;
    } else console.log(`${name} is up to date.`);
  } else {
    await writeFile(target, sdl);
    console.log(`Wrote ${name}`);
  }
}
if (stale) process.exit(1);
