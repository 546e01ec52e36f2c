import { type RunningSandbox, startSandbox } from '../../src/sandbox/http/server.ts';
import { SandboxStore } from '../../src/sandbox/store/store.ts';

export const ADMIN_TOKEN = 'test-admin-token';

export interface HttpResult {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field in tests
  body: any;
  text: string;
}

/** An empty sandbox on port 0 plus a small client for its external and admin APIs. */
export async function startTestSandbox(store = new SandboxStore()) {
  const running: RunningSandbox = await startSandbox({ store, adminToken: ADMIN_TOKEN, port: 0 });

  async function call(
    method: string,
    path: string,
    options: { key?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
  ): Promise<HttpResult> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(running.url + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  }

  async function admin(method: string, path: string, body?: unknown) {
    const result = await call(method, `/sandbox/v1${path}`, { key: ADMIN_TOKEN, body });
    if (result.status >= 300) throw new Error(`admin ${method} ${path}: ${result.status} ${result.text}`);
    return result.body.data;
  }

  const world = {
    async merchant(
      withdrawalConfig: { fee: string; dailyLimit: string; monthlyLimit: string } | null = {
        fee: '1',
        dailyLimit: '100000',
        monthlyLimit: '1000000',
      },
    ): Promise<{ id: string; key: string; readOnlyKey: string }> {
      const merchant = await admin('POST', '/merchants', { name: 'Test merchant', withdrawalConfig });
      const rw = await admin('POST', `/merchants/${merchant.id}/api-keys`, {
        name: 'rw',
        access: 'read_write',
      });
      const ro = await admin('POST', `/merchants/${merchant.id}/api-keys`, {
        name: 'ro',
        access: 'read_only',
      });
      return { id: merchant.id, key: rw.key, readOnlyKey: ro.key };
    },
    wallet(merchantId: string, balances: Record<string, string> = { USDT: '1000', TRX: '100' }) {
      return admin('POST', `/merchants/${merchantId}/wallets`, { balances });
    },
    deposit(walletId: string, body: Record<string, unknown>) {
      return admin('POST', `/wallets/${walletId}/deposits`, body);
    },
    transitionWithdrawal(id: string, status: string) {
      return admin('POST', `/withdrawal-intents/${id}/transition`, { status });
    },
    transitionDeposit(id: string, status: string) {
      return admin('POST', `/deposits/${id}/transition`, { status });
    },
  };

  return { ...running, store, call, admin, world };
}

export type TestSandbox = Awaited<ReturnType<typeof startTestSandbox>>;

/**
 * A fault (POST /sandbox/v1/faults) that answers the wallet list with `items` as its one page,
 * whatever they hold: what a REST API that sends items the gateway cannot render looks like.
 */
export function walletListFault(items: unknown[]) {
  const paging = {
    size: 20,
    page: 1,
    count: items.length,
    limit: 20,
    totalCount: items.length,
    totalPages: 1,
  };
  const body = JSON.stringify({ code: 'ok', message: 'OK', paging, data: items });
  return { method: 'GET', path: '/external/v1/wallets?', status: 200, body };
}

/** A valid Tron address that no sandbox wallet uses. */
export const EXTERNAL_TRON_ADDRESS = 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7';

export function withdrawalBody(walletId: string, overrides: Record<string, unknown> = {}) {
  return {
    senderWalletId: walletId,
    serviceFeeMode: 'exclusive',
    currencyCode: 'USDT',
    amount: '10.00',
    destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS },
    ...overrides,
  };
}

/** USDT balance of a wallet as the public API shows it. */
export function usdt(wallet: {
  assets: { currencyCode: string; balance: { availableAmount: string; lockedAmount: string } }[];
}) {
  const asset = wallet.assets.find((a) => a.currencyCode === 'USDT');
  if (!asset) throw new Error('wallet has no USDT asset');
  return asset.balance;
}

/** createWithdrawalIntent's GraphQL input: 1 USDT from `walletId` to an external address. */
export function withdrawalInput(walletId: string, overrides: Record<string, unknown> = {}) {
  return {
    walletId,
    serviceFeeMode: 'EXCLUSIVE',
    currencyCode: 'USDT',
    amount: '1.00',
    destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS },
    ...overrides,
  };
}

/** A createWithdrawalIntent that selects only the result's type. */
export const WITHDRAW =
  'mutation Withdraw($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) { __typename } }';
