import type { PageRequest } from '../schema/pagination.ts';

/** The newest page's size: it holds a busy wallet's latest items, and is free under the fair share. */
export const HEAD_SIZE = 250;
/** Pages of a walk: the REST maximum, so a walk makes the fewest calls. */
export const WALK_PAGE_SIZE = 1000;
/** The largest page read for items at given ages: small pages are free under the fair share. */
const CLUSTER_SIZE = 250;

/**
 * Pages that hold these positions (ascending): the list cut in blocks of 250 or of 1000, whichever
 * makes fewer calls, and in each block that holds some, the smallest page that holds them all.
 */
export function clusters(positions: readonly number[]): PageRequest[] {
  const small = clustersOf(positions, CLUSTER_SIZE);
  if (small.length <= 1) return small;
  const large = clustersOf(positions, WALK_PAGE_SIZE);
  return large.length < small.length ? large : small;
}

function clustersOf(positions: readonly number[], blockSize: number): PageRequest[] {
  const requests: PageRequest[] = [];
  let i = 0;
  while (i < positions.length) {
    const first = positions[i] as number;
    const block = Math.floor(first / blockSize);
    let j = i;
    while (j + 1 < positions.length && Math.floor((positions[j + 1] as number) / blockSize) === block) j++;
    requests.push(onePage(first, positions[j] as number, blockSize) ?? { page: block + 1, size: blockSize });
    i = j + 1;
  }
  return requests;
}

/** The smallest page of at most `largest` items holding positions first..last, if any. */
function onePage(first: number, last: number, largest: number): PageRequest | undefined {
  for (let size = last - first + 1; size <= largest; size++) {
    if (Math.floor(first / size) === Math.floor(last / size))
      return { page: Math.floor(first / size) + 1, size };
  }
  return undefined;
}
