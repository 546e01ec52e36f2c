import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { type Change, CriticalityLevel, diff } from '@graphql-inspector/core';
import {
  buildSchema,
  type GraphQLSchema,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  NoUnusedFragmentsRule,
  parse,
  specifiedRules,
  validate,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { PREVIOUS_RELEASE } from '../support/previous-release.ts';

/**
 * The schema against the previous release's (docs/schema.md#changing-the-schema): apps in the
 * stores query the schema of months ago, and a fleet runs two releases during every deploy.
 *
 * - A breaking change (graphql-inspector's BREAKING) fails unless the CHANGELOG's newest entry
 *   names it under "### Breaking", with what apps must do.
 * - A field or enum value removed must have been @deprecated in the previous release.
 * - Dangerous changes (a new union member, an argument added, …) are listed in the output.
 * - Every example app's operations, and schema/operations, are valid against both schemas: what an
 *   app built against the previous release sends, this one answers, and the other way round
 *   during a deploy.
 */

const root = new URL('../..', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
const previousSdl = execFileSync(
  'git',
  ['-C', root.pathname, 'show', `${PREVIOUS_RELEASE.commit}:schema/schema.graphql`],
  { encoding: 'utf8', timeout: 30_000 },
);
const previous = buildSchema(previousSdl);
const current = buildSchema(read('schema/schema.graphql'));
// The CHANGELOG's newest entry, released or not ("Unreleased" while work goes on).
const newest = read('CHANGELOG.md').split(/^## /m)[1] ?? '';
const breakingSection = /^### Breaking\n([\s\S]*?)(?=^### |$(?![\s\S]))/m.exec(newest)?.[1] ?? '';
/** Whether `section` has a bullet that starts with the change's path in backticks. */
const names = (section: string, path: string | undefined) =>
  path !== undefined && section.split('\n').some((line) => line.startsWith(`- \`${path}\``));

/**
 * Each app's documents, read as it sends them: one app's files together (a fragment of one file
 * may be spread in another), or each text Relay persisted alone (each holds its fragments).
 */
const APPS: Record<string, string[]> = {
  'schema/operations': [files('schema/operations', '.graphql').join('\n')],
  'examples/apollo': [files('examples/apollo/operations', '.graphql').join('\n')],
  'examples/urql': [files('examples/urql/operations', '.graphql').join('\n')],
  'examples/relay': Object.values(
    JSON.parse(read('examples/relay/generated/persisted-queries.json')) as Record<string, string>,
  ),
  // The texts the Apollo app sends under trusted documents (PERSISTED_DOCUMENTS_MODE=enforce).
  'examples/apollo manifest': Object.values(
    JSON.parse(read('examples/apollo/generated/persisted-documents.json')) as Record<string, string>,
  ),
  // What apps built against the previous release send: its own operations, as it shipped them.
  [`${PREVIOUS_RELEASE.version}'s operations`]: previousOperations(),
};

/** The previous release's operation files (schema/operations, the example apps'), one document per directory. */
function previousOperations(): string[] {
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', root.pathname, ...args], { encoding: 'utf8', timeout: 30_000 });
  const byDir = new Map<string, string[]>();
  for (const path of git('ls-tree', '-r', '--name-only', PREVIOUS_RELEASE.commit).split('\n')) {
    if (!/^(schema\/operations|examples\/(apollo|urql)\/operations)\/[^/]+\.graphql$/.test(path)) continue;
    const dir = path.slice(0, path.lastIndexOf('/'));
    byDir.set(dir, [...(byDir.get(dir) ?? []), git('show', `${PREVIOUS_RELEASE.commit}:${path}`)]);
  }
  return [...byDir.values()].map((texts) => texts.join('\n'));
}

function files(dir: string, ext: string): string[] {
  return readdirSync(new URL(`${dir}/`, root))
    .filter((name) => name.endsWith(ext))
    .map((name) => read(`${dir}/${name}`));
}

let changes: Change[] = [];

describe(`the schema against ${PREVIOUS_RELEASE.version}'s`, () => {
  it('has no breaking change the CHANGELOG does not name under Breaking; lists the dangerous ones', async () => {
    changes = await diff(previous, current);
    const dangerous = changes.filter((c) => c.criticality.level === CriticalityLevel.Dangerous);
    for (const change of dangerous) console.log(`dangerous: ${change.message}`);
    const breaking = changes.filter((c) => c.criticality.level === CriticalityLevel.Breaking);
    // Each breaking change: a bullet of the Breaking section that starts with its path.
    expect(breaking.filter((c) => !names(breakingSection, c.path)).map((c) => c.message)).toEqual([]);
    // Each dangerous change (a new union member or enum value, an argument added): its path in
    // backticks somewhere in the newest entry, for the apps to read.
    const unsaid = dangerous.filter((c) => !c.path || !newest.includes(`\`${c.path.split('.')[0]}\``));
    expect(unsaid.map((c) => c.message)).toEqual([]);
  });

  it('removes only fields and enum values the previous release deprecated', async () => {
    changes = changes.length ? changes : await diff(previous, current);
    const removed = changes.filter((c) =>
      ['FIELD_REMOVED', 'ENUM_VALUE_REMOVED', 'FIELD_ARGUMENT_REMOVED', 'INPUT_FIELD_REMOVED'].includes(
        c.type,
      ),
    );
    const undeprecated = removed.filter((c) => !wasDeprecated(previous, c.path ?? ''));
    expect(undeprecated.map((c) => c.message)).toEqual([]);
  });

  for (const [app, texts] of Object.entries(APPS)) {
    it(`${app}: every operation is valid against this schema and the previous one`, () => {
      expect(texts.length).toBeGreaterThan(0);
      const rules = specifiedRules.filter((rule) => rule !== NoUnusedFragmentsRule);
      for (const text of texts) {
        const document = parse(text);
        for (const [name, schema] of [
          ['this release', current],
          [PREVIOUS_RELEASE.version, previous],
        ] as const) {
          expect(
            validate(schema, document, rules).map((e) => e.message),
            `${app} against ${name}`,
          ).toEqual([]);
        }
      }
    });
  }
});

/** Whether `Type.field` (or `Enum.VALUE`) carried @deprecated in `schema`. */
function wasDeprecated(schema: GraphQLSchema, path: string): boolean {
  const [typeName, member] = path.split('.');
  const type = schema.getType(typeName ?? '');
  if (!type || !member) return false;
  if (isObjectType(type) || isInterfaceType(type))
    return Boolean(type.getFields()[member]?.deprecationReason);
  if ('getValue' in type && typeof type.getValue === 'function')
    return Boolean((type.getValue(member) as { deprecationReason?: string } | undefined)?.deprecationReason);
  return false;
}
