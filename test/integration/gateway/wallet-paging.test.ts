import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO_KEYS, seedWorld } from '../../../src/sandbox/seed.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';

/**
 * What paging a wallet's list costs at depth, counted in REST calls. A wallet's deposits are its
 * part of the merchant's whole list (the REST API has no wallet filter); paging them to the end
 * must cost about the same REST calls per page however deep the page is, not a rescan from the
 * newest item each time. Each page is sent with its own X-Request-Id, which the gateway forwards,
 * so only that request's calls are counted (not the truth read below, nor work in the background).
 * The REST API's share per key is off: it only delays calls (fair-share.test.ts checks it).
 */

const KEY = DEMO_KEYS.acmeReadWrite;
const PAGE = 100;

const PAGE_QUERY = `query WalletDeposits($wallet: ID!, $after: String) {
  wallet(id: $wallet) {
    deposits(first: ${PAGE}, after: $after) {
      edges { node { restId } }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

let gateway: TestGateway;
let walletId: string;

beforeAll(async () => {
  // 20,000 deposits over four wallets: about 5,000 each, 50 pages of 100, the merchant's list 20
  // REST pages of 1000.
  const { store, merchants } = seedWorld({ wallets: 4, deposits: 20_000, withdrawals: 0 });
  walletId = store.listWallets(merchants.acme.id, 1, 1).items[0]?.id ?? '';
  gateway = await startTestGateway({ store, config: { upstream: { fairShare: { callsPerKey: 0 } } } });
});
afterAll(async () => {
  await gateway?.close();
});

/** The wallet's deposit ids, newest first, read straight from the REST API. */
async function walletDeposits(): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const { body } = await gateway.sandbox.call('GET', `/external/v1/deposits?page=${page}&size=1000`, {
      key: KEY,
    });
    for (const item of body.data as { id: string; wallet: { id: string } }[]) {
      if (item.wallet.id === walletId) ids.push(item.id);
    }
    if (page * 1000 >= body.paging.totalCount) return ids;
  }
}

describe("a wallet's deposits at 20,000 deposits", () => {
  // Fails while each page rescans the merchant's list from the newest item (page j reads about
  // j × 0.4 REST pages); passes once a cursor tells where in the merchant's list to go on.
  test('cost about as many REST calls per page of 100 at the end as at the start', async () => {
    const expected = await walletDeposits();
    expect(expected.length).toBeGreaterThan(4_000);
    const calls: number[] = [];
    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; ; page++) {
      const requestId = `wallet-paging-${page}`;
      const { body } = await gateway.request(
        PAGE_QUERY,
        { wallet: walletId, after },
        { key: KEY, headers: { 'x-request-id': requestId } },
      );
      expect(body.errors).toBeUndefined();
      const connection = (
        body.data as {
          wallet: {
            deposits: {
              edges: { node: { restId: string } }[];
              pageInfo: { hasNextPage: boolean; endCursor: string | null };
            };
          };
        }
      ).wallet.deposits;
      seen.push(...connection.edges.map((edge) => edge.node.restId));
      calls.push(gateway.sandbox.sandbox.requests.filter((r) => r.requestId === requestId).length);
      // Checked as it goes, so a cost that grows with depth fails at the depth where it does: a
      // page may cost a few calls more than the second now and then (a walk that meets the
      // wallet index as it becomes ready), never more and more.
      if (page >= 2) {
        expect(calls[page], `REST calls per page: ${calls.join(' ')}`).toBeLessThanOrEqual(
          (calls[1] as number) + 5,
        );
      }
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
      expect(page).toBeLessThan(expected.length / PAGE + 1);
    }
    // Every deposit of the wallet once, in order: the cost is not bought with a wrong answer.
    expect(seen).toEqual(expected);
    expect(calls.length).toBe(Math.ceil(expected.length / PAGE));
    expect(calls.at(-1), `REST calls per page: ${calls.join(' ')}`).toBeLessThanOrEqual(
      (calls[1] as number) + 2,
    );
  }, 120_000);
});
