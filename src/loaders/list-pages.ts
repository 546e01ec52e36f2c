import type { PageRequest } from '../schema/pagination.ts';

/**
 * The pages a merchant list is read in (wallet-lists.ts, walk.ts): its newest page, a walk's pages,
 * and the fewest pages that hold given positions.
 */

/** The newest page's size: a busy wallet's latest items are in it, and it is free under the fair share. */
export const HEAD_SIZE = 250;
/** Pages of a walk: the REST maximum, so a walk makes the fewest calls. */
export const WALK_PAGE_SIZE = 1000;
/** The largest page read for items at given ages: small pages are free under the fair share. */
const CLUSTER_SIZE = 250;

/**
 * Few pages that hold these positions (ascending), by the number of calls: the list cut in blocks
 * of 250 (small pages, free under the fair share) or of 1000, whichever makes fewer calls, and for
 * each block that holds some, the smallest page within it that holds them all (a page of one for a
 * lone item). A window of a busy wallet lies in a few blocks of 250; a wallet whose items are spread
 * far apart costs at most a page of 1000 for each 1000 positions its window spans.
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
