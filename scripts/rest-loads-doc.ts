/**
 * docs/schema.md's tables of what each REST-backed field and each example screen costs upstream,
 * printed from the fields' declarations (src/schema/rest-loads.ts) by `npm run schema:print`
 * between the markers below, and checked by `npm run schema:check` like the SDL.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { type GraphQLSchema, getOperationAST, OperationTypeNode, parse } from 'graphql';
import { READ_COST } from '../src/execution/operation-cost.ts';
import { type RestLoad, restCallsOf, restLoadsOf } from '../src/schema/rest-loads.ts';

export const BEGIN =
  "<!-- rest-loads: printed by `npm run schema:print` from each field's restLoad; do not edit -->";
export const END = '<!-- /rest-loads -->';

const LOADS: Record<RestLoad['loads'], string> = {
  batch: 'batched: one list read for every instance in the request',
  byId: 'one call per distinct id in the request',
  page: 'one call per REST page of its window',
  scan: "the wallet's share of the merchant's list (no wallet filter)",
  write: 'one call, at most once per idempotency key',
  poll: 'polled in the background, once per watched feed',
};

function counted(load: RestLoad): string {
  if (load.loads === 'scan')
    return `its fields, plus ${READ_COST} per read: one for a window, the call budget for a walk to the list's end`;
  if (load.loads === 'poll') return 'at subscribe, its fields';
  return 'its fields';
}

export function restLoadsSection(schema: GraphQLSchema, operations: URL): string {
  const fields = [...restLoadsOf(schema)].map(
    ([coordinate, load]) =>
      `| \`${coordinate}\` | \`${load.route}\` | ${LOADS[load.loads]} | ${load.calls} | ${counted(load)} |`,
  );
  const screens = readdirSync(operations)
    .filter((file) => file.endsWith('.graphql'))
    .sort()
    .flatMap((file) => {
      const document = parse(readFileSync(new URL(file, operations), 'utf8'));
      if (getOperationAST(document)?.operation === OperationTypeNode.SUBSCRIPTION) return [];
      return [`| \`${file}\` | ${restCallsOf(schema, document)} |`];
    });
  return [
    BEGIN,
    '| Field | REST route | How it loads | Calls alone | The cost limit counts |',
    '|---|---|---|---|---|',
    ...fields,
    '',
    '| Example operation (`schema/operations`) | REST calls on a short list |',
    '|---|---|',
    ...screens,
    END,
  ].join('\n');
}

/** `page` with its section replaced by `section`; throws when the markers are missing. */
export function withSection(page: string, section: string): string {
  const begin = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`docs/schema.md has no ${BEGIN} … ${END} section`);
  return page.slice(0, begin) + section + page.slice(end + END.length);
}
