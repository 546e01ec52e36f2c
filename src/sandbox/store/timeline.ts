/**
 * One merchant's list of one resource, kept in ascending (createdAt, id) order and read newest
 * first, as the REST API lists: `createdAt desc, id desc`. Inserting in order keeps reads a slice.
 */
export class Timeline<T extends { id: string; createdAt: string }> {
  readonly items: T[] = [];

  insert(item: T): void {
    const items = this.items;
    const last = items.at(-1);
    if (!last || compareAscending(last, item) <= 0) {
      items.push(item);
      return;
    }
    let low = 0;
    let high = items.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareAscending(items[mid] as T, item) <= 0) low = mid + 1;
      else high = mid;
    }
    items.splice(low, 0, item);
  }

  /** Newest-first items matching the filter, as one page, with the total count. */
  page(page: number, size: number, filter?: (item: T) => boolean): { items: T[]; totalCount: number } {
    const source = filter ? this.items.filter(filter) : this.items;
    const totalCount = source.length;
    const items: T[] = [];
    const start = (page - 1) * size;
    for (let i = start; i < start + size && i < totalCount; i++) {
      items.push(source[totalCount - 1 - i] as T);
    }
    return { items, totalCount };
  }
}

function compareAscending(
  a: { id: string; createdAt: string },
  b: { id: string; createdAt: string },
): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
