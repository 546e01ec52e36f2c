import { readdirSync, readFileSync } from 'node:fs';
import { getOperationAST, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.ts';
import { OPERATION_HTTP_STATUS } from '../../src/errors/errors.ts';
import { schema } from '../../src/schema/index.ts';
import { DEFAULT_WINDOW, MAX_PAGE_SIZE } from '../../src/schema/pagination.ts';

/**
 * The quick start states facts a frontend developer builds on; these tests fail when the
 * code moves away from what it says.
 */
const guide = readFileSync(new URL('../../docs/quick-start.md', import.meta.url), 'utf8');
const section = (title: string) => {
  const start = guide.indexOf(`## ${title}`);
  expect(start, `section "${title}"`).toBeGreaterThanOrEqual(0);
  const end = guide.indexOf('\n## ', start + 1);
  return guide.slice(start, end === -1 ? undefined : end);
};

describe('docs/quick-start.md', () => {
  it('names every GraphiQL tab (one per example operation)', () => {
    const tabs = readdirSync(new URL('../../schema/operations/', import.meta.url))
      .filter((file) => file.endsWith('.graphql'))
      .map((file) => {
        const text = readFileSync(new URL(`../../schema/operations/${file}`, import.meta.url), 'utf8');
        return getOperationAST(parse(text))?.name?.value ?? file;
      });
    const named = section('1. Try it in GraphiQL');
    for (const tab of tabs) expect(named, tab).toContain(`\`${tab}\``);
  });

  it('lists every subscription with its arguments', () => {
    const live = section('7. Live screens: subscriptions');
    for (const field of Object.values(schema.getSubscriptionType()?.getFields() ?? {})) {
      const listed = new RegExp(`\`${field.name}\\(([^)]*)\\)\``).exec(live)?.[1];
      expect(listed, `${field.name} in the table`).toBeDefined();
      const args = (listed ?? '')
        .split(',')
        .map((arg) => arg.trim().replace(/:$/, ''))
        .filter(Boolean);
      expect(args.sort(), field.name).toEqual(field.args.map((arg) => arg.name).sort());
    }
  });

  it('states the page sizes and the subscription limit the gateway applies', () => {
    expect(section('6. Pagination')).toContain(
      `\`first\` (default ${DEFAULT_WINDOW}, at most ${MAX_PAGE_SIZE})`,
    );
    const perKey = parseConfig({}).subscriptions.perKey;
    expect(section('7. Live screens: subscriptions')).toContain(`One key may hold ${perKey} subscriptions`);
  });

  it('says a refused key is always HTTP 401', () => {
    expect(OPERATION_HTTP_STATUS.UNAUTHENTICATED?.status).toBe(401);
    expect(section('5. Errors come in two places')).toContain('`UNAUTHENTICATED`: always HTTP 401');
  });
});
