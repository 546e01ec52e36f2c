import type { ObjectRef } from '@pothos/core';
import type { Page } from '../upstream/types.ts';
import { builder } from './builder.ts';
import {
  type ConnectionArgs,
  type CursorAnchor,
  encodeCursor,
  MAX_PAGE_SIZE,
  type PageRequest,
  pageOffset,
  planPages,
  resolveWindow,
  type Window,
} from './pagination.ts';

/** What connection fields return; Pothos derives `nodes` from `edges`. */
export interface ConnectionShape<T extends { id: string }> {
  edges: { cursor: string; node: T }[];
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
  totalCount: () => Promise<number>;
}

/**
 * An edge whose cursor is encoded only if the query asks for it (most screens read `nodes`):
 * `place` is its position in the REST list (encodeCursor), or its age in a wallet's (encodeAgeCursor).
 */
export class Edge<T extends { id: string }> {
  readonly node: T;
  private readonly scope: string;
  private readonly place: number;
  private readonly encode: (scope: string, place: number, id: string) => string;

  constructor(scope: string, place: number, node: T, encode = encodeCursor) {
    this.scope = scope;
    this.place = place;
    this.node = node;
    this.encode = encode;
  }

  get cursor(): string {
    return this.encode(this.scope, this.place, this.node.id);
  }
}

function shape<T extends { id: string }>(
  scope: string,
  window: Window,
  items: T[],
  total: number,
): Omit<ConnectionShape<T>, 'totalCount'> {
  const edges = items.map((node, i) => new Edge(scope, window.start + i, node));
  return {
    edges,
    pageInfo: {
      hasPreviousPage: window.start > 0 && total > 0,
      hasNextPage: window.start + items.length < total,
      get startCursor() {
        return edges[0]?.cursor ?? null;
      },
      get endCursor() {
        return edges.at(-1)?.cursor ?? null;
      },
    },
  };
}

type Resolved = { window: Window; anchor: CursorAnchor | null };

/** Fetched REST pages, readable by list position. */
class Positions<T> {
  private readonly byPosition = new Map<number, T>();
  total: number | undefined;

  add(request: PageRequest, page: Page<T>): void {
    const offset = pageOffset(request);
    for (const [i, item] of page.items.entries()) this.byPosition.set(offset + i, item);
    this.total = page.paging.totalCount;
  }

  at(position: number): T | undefined {
    return this.byPosition.get(position);
  }

  /** Where an item with this id is among what was fetched. */
  find(id: string): number | undefined {
    for (const [position, item] of this.byPosition) if ((item as { id: string }).id === id) return position;
    return undefined;
  }

  slice(window: Window): T[] {
    const items: T[] = [];
    for (let p = window.start; p < window.end; p++) {
      const item = this.byPosition.get(p);
      if (item === undefined) break;
      items.push(item);
    }
    return items;
  }
}

/**
 * A connection over a REST list: the window the arguments ask for, in the fewest pages (planPages),
 * its cursors stable while the list moves (docs/ids-and-connections.md). `fetchPage` should go
 * through the request's page loader, so a page fetched twice in one request costs one call.
 */
export async function resolvePagedConnection<T extends { id: string }>(
  scope: string,
  args: ConnectionArgs,
  fetchPage: (request: PageRequest) => Promise<Page<T>>,
): Promise<ConnectionShape<T>> {
  const positions = new Positions<T>();
  const fetchWindow = async (window: Window) => {
    const requests = planPages(window);
    const pages = await Promise.all(requests.map(fetchPage));
    for (const [i, request] of requests.entries()) positions.add(request, pages[i] as Page<T>);
  };

  let resolved = resolveWindow(scope, args);
  if ('needsTotal' in resolved) {
    // `last` without `before`: the first page of the same size tells the total (and, for short
    // lists, already holds the answer).
    const request = { page: 1, size: Math.min(Math.max(args.last ?? 1, 1), MAX_PAGE_SIZE) };
    positions.add(request, await fetchPage(request));
    resolved = resolveWindow(scope, args, positions.total);
  }
  let { window, anchor } = resolved as Resolved;
  await fetchWindow(withAnchor(window, anchor));
  if (anchor && positions.at(anchor.offset)?.id !== anchor.id) {
    let found = positions.find(anchor.id);
    if (found === undefined) {
      // Newer items pushed it further than this window: look through the next 1000 positions.
      await fetchWindow({ start: anchor.offset + 1, end: anchor.offset + 1 + MAX_PAGE_SIZE });
      found = positions.find(anchor.id);
    }
    if (found !== undefined) {
      ({ window, anchor } = resolveWindow(scope, args, positions.total, found - anchor.offset) as Resolved);
      await fetchWindow(window);
    }
  }
  // An empty window still needs the total for pageInfo and totalCount: one smallest call.
  if (positions.total === undefined)
    positions.add({ page: 1, size: 1 }, await fetchPage({ page: 1, size: 1 }));
  const total = positions.total ?? 0;
  return { ...shape(scope, window, positions.slice(window), total), totalCount: async () => total };
}

/** The window, widened by one position to include the cursor's item when that is cheap. */
function withAnchor(window: Window, anchor: CursorAnchor | null): Window {
  if (!anchor || window.end - window.start >= MAX_PAGE_SIZE) return window;
  if (anchor.offset === window.start - 1) return { start: anchor.offset, end: window.end };
  if (anchor.offset === window.end) return { start: window.start, end: anchor.offset + 1 };
  return window;
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
          // Nullable: on Wallet.deposits and Wallet.withdrawalIntents it reads the merchant's whole
          // list, a call of its own that may fail alone.
          nullable: true,
          description:
            'Items in the whole connection (with its filter). Null only when counting them failed, with an error at this path.',
          resolve: (connection) => (connection as unknown as ConnectionShape<{ id: string }>).totalCount(),
        }),
      }),
      description: `A page of ${name} items, newest first (Relay cursor connection over the REST API's page/size lists).`,
    },
    { name: `${name}Edge`, description: `One ${name} of a page, with its cursor.` },
  );
}
