import type { ObjectRef } from '@pothos/core';
import type { ListScan } from '../loaders.ts';
import type { Page } from '../upstream/types.ts';
import { builder } from './builder.ts';
import {
  type ConnectionArgs,
  encodeCursor,
  MAX_PAGE_SIZE,
  type PageRequest,
  pageOffset,
  planPages,
  resolveWindow,
  type Window,
} from './pagination.ts';

/** What connection fields return; Pothos derives `nodes` from `edges`. */
export interface ConnectionShape<T> {
  edges: { cursor: string; node: T }[];
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
  totalCount: () => Promise<number>;
}

function shape<T>(
  scope: string,
  window: Window,
  items: T[],
  total: number,
): Omit<ConnectionShape<T>, 'totalCount'> {
  const edges = items.map((node, i) => ({ cursor: encodeCursor(scope, window.start + i), node }));
  return {
    edges,
    pageInfo: {
      hasPreviousPage: window.start > 0 && total > 0,
      hasNextPage: window.start + items.length < total,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  };
}

/**
 * A connection over a REST list: the window the arguments ask for, fetched with the fewest pages
 * (planPages). `fetchPage` should go through the request's page loader, so a page fetched twice
 * in one request (for example the probe for `last` without `before`) costs one call.
 */
export async function resolvePagedConnection<T>(
  scope: string,
  args: ConnectionArgs,
  fetchPage: (request: PageRequest) => Promise<Page<T>>,
): Promise<ConnectionShape<T>> {
  let resolved = resolveWindow(scope, args);
  let total: number | undefined;
  if ('needsTotal' in resolved) {
    // `last` without `before`: the first page of the same size tells the total (and, for short
    // lists, already holds the answer).
    const probe = await fetchPage({ page: 1, size: Math.min(Math.max(args.last ?? 1, 1), MAX_PAGE_SIZE) });
    total = probe.paging.totalCount;
    resolved = resolveWindow(scope, args, total);
    if ('needsTotal' in resolved) throw new Error('window unresolved with a known total');
  }
  const { window } = resolved;
  const requests = planPages(window);
  // An empty window still needs the total for pageInfo and totalCount: one smallest call.
  const pages = await Promise.all(
    (requests.length ? requests : total === undefined ? [{ page: 1, size: 1 }] : []).map(fetchPage),
  );
  total ??= pages[0]?.paging.totalCount ?? 0;
  const items: T[] = [];
  requests.forEach((request, i) => {
    const offset = pageOffset(request);
    (pages[i]?.items ?? []).forEach((item, j) => {
      const position = offset + j;
      if (position >= window.start && position < window.end) items[position - window.start] = item;
    });
  });
  const known = total;
  return { ...shape(scope, window, items.filter(Boolean), known), totalCount: async () => known };
}

/**
 * A connection over one wallet's items of a merchant-wide list (the REST API has no wallet
 * filter): the request's shared scan walks pages only until this window, plus one item to know
 * hasNextPage, is filled. totalCount walks the whole list, so it runs only when selected.
 */
export async function resolveScanConnection<T extends { id: string; wallet: { id: string } }>(
  scope: string,
  args: ConnectionArgs,
  scan: ListScan<T>,
  walletId: string,
): Promise<ConnectionShape<T>> {
  let resolved = resolveWindow(scope, args);
  let items: T[];
  if ('needsTotal' in resolved) {
    items = await scan.itemsFor(walletId, Number.POSITIVE_INFINITY);
    resolved = resolveWindow(scope, args, items.length);
    if ('needsTotal' in resolved) throw new Error('window unresolved with a known total');
  } else {
    items = await scan.itemsFor(walletId, resolved.window.end);
  }
  const { window } = resolved;
  const slice = items.slice(window.start, window.end);
  const connection = shape(scope, window, slice, items.length);
  return {
    ...connection,
    pageInfo: {
      ...connection.pageInfo,
      // One more item than the window tells whether a next page exists; the scan reads on for it
      // only when the field is resolved. GraphQL awaits a promise in place of the boolean.
      get hasNextPage(): boolean {
        return scan
          .itemsFor(walletId, window.end + 1)
          .then((more) => more.length > window.end) as unknown as boolean;
      },
    },
    totalCount: async () => (await scan.itemsFor(walletId, Number.POSITIVE_INFINITY)).length,
  };
}

type BuilderTypes = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer S> ? S : never;

/**
 * `<Name>Connection` and `<Name>Edge` for a node type, with `totalCount` resolved from the lazy
 * total every connection result carries (so it costs upstream calls only when selected).
 */
export function connectionType<T>(type: ObjectRef<BuilderTypes, T>, name: string) {
  return builder.connectionObject(
    {
      type,
      name: `${name}Connection`,
      fields: (t) => ({
        totalCount: t.int({
          resolve: (connection) => (connection as unknown as ConnectionShape<T>).totalCount(),
        }),
      }),
    },
    { name: `${name}Edge` },
  );
}
