import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { type Change, CriticalityLevel, diff } from '@graphql-inspector/core';
import {
  buildSchema,
  type GraphQLSchema,
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
const version = (JSON.parse(read('package.json')) as { version: string }).version;
const newest =
  read('CHANGELOG.md')
    .split(/^## /m)
    .find((part) => part.startsWith(`${version}\n`)) ?? '';
const breakingSection = /^### Breaking\n([\s\S]*?)(?=^### |$(?![\s\S]))/m.exec(newest)?.[1] ?? '';

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
};

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
    const unnamed = breaking.filter((c) => !c.path || !breakingSection.includes(`\`${c.path}\``));
    expect(unnamed.map((c) => c.message)).toEqual([]);
  });

  it('removes only fields and enum values the previous release deprecated', async () => {
    changes = changes.length ? changes : await diff(previous, current);
    const removed = changes.filter((c) => c.type === 'FIELD_REMOVED' || c.type === 'ENUM_VALUE_REMOVED');
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
