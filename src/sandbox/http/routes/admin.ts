import { randomUUID } from 'node:crypto';
import { Money } from '../../money.ts';
import {
  presentDeposit,
  presentKey,
  presentMerchant,
  presentWallet,
  presentWithdrawal,
} from '../../present.ts';
import type { SandboxStore } from '../../store/store.ts';
import {
  createApiKeyBody,
  createDepositBody,
  createMerchantBody,
  createWalletBody,
  depositTransitionBody,
  faultBody,
  parseBody,
  parsePathId,
  withdrawalTransitionBody,
} from '../../validate.ts';
import type { Fault, Faults } from '../faults.ts';
import { ID_SEGMENT, ok, type Route, readJson, requireJson } from '../router.ts';

/** What the admin API reads and changes beyond the store. */
export interface AdminState {
  store: SandboxStore;
  faults: Faults;
  /** The /external request log, and the count of every /external request since start. */
  requests: unknown[];
  externalRequests(): number;
}

/**
 * The admin API under /sandbox/v1 (guarded by the admin token before any of these runs): build a
 * world (merchants, keys, wallets, deposits), move resources along their lifecycles, inject
 * faults, and read the request log that tests count upstream calls with.
 */
export function adminRoutes(state: AdminState): Route[] {
  const { store, faults } = state;
  return [
    {
      method: 'GET',
      pattern: /^\/sandbox\/v1\/merchants$/,
      handler: () => ok([...store.merchants.values()].map(presentMerchant)),
    },
    {
      method: 'POST',
      pattern: /^\/sandbox\/v1\/merchants$/,
      status: 201,
      handler: async ({ req }) => {
        const input = parseBody(createMerchantBody, await readJson(req));
        const config = input.withdrawalConfig && {
          fee: new Money(input.withdrawalConfig.fee),
          dailyLimit: new Money(input.withdrawalConfig.dailyLimit),
          monthlyLimit: new Money(input.withdrawalConfig.monthlyLimit),
        };
        return ok(presentMerchant(store.createMerchant(input.name, config)));
      },
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/sandbox/v1/merchants/${ID_SEGMENT}/api-keys$`),
      status: 201,
      handler: async ({ req }, [merchantId]) => {
        const input = parseBody(createApiKeyBody, await readJson(req));
        const { record, key } = store.createApiKey(parsePathId(merchantId ?? ''), input.name, input.access);
        return ok({ ...presentKey(record), key });
      },
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/sandbox/v1/api-keys/${ID_SEGMENT}/revoke$`),
      handler: ({ req }, [keyId]) => {
        requireJson(req, true);
        return ok(presentKey(store.revokeApiKey(parsePathId(keyId ?? ''))));
      },
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/sandbox/v1/merchants/${ID_SEGMENT}/wallets$`),
      status: 201,
      handler: async ({ req }, [merchantId]) => {
        const input = parseBody(createWalletBody, await readJson(req));
        const balances = Object.fromEntries(
          Object.entries(input.balances).map(([c, v]) => [c, new Money(v)]),
        );
        return ok(presentWallet(store.createWallet(parsePathId(merchantId ?? ''), balances)));
      },
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/sandbox/v1/wallets/${ID_SEGMENT}/deposits$`),
      status: 201,
      handler: async ({ req }, [walletId]) => {
        const input = parseBody(createDepositBody, await readJson(req));
        const deposit = store.createDeposit(parsePathId(walletId ?? ''), {
          ...input,
          amount: new Money(input.amount),
          amountFee: new Money(input.amountFee),
        });
        return ok(presentDeposit(deposit));
      },
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/sandbox/v1/deposits/${ID_SEGMENT}/transition$`),
      handler: async ({ req }, [depositId]) => {
        const input = parseBody(depositTransitionBody, await readJson(req));
        return ok(presentDeposit(store.transitionDeposit(parsePathId(depositId ?? ''), input.status)));
      },
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/sandbox/v1/withdrawal-intents/${ID_SEGMENT}/transition$`),
      handler: async ({ req }, [intentId]) => {
        const input = parseBody(withdrawalTransitionBody, await readJson(req));
        return ok(presentWithdrawal(store.transitionWithdrawal(parsePathId(intentId ?? ''), input.status)));
      },
    },
    { method: 'GET', pattern: /^\/sandbox\/v1\/faults$/, handler: () => ok(faults.list) },
    {
      method: 'POST',
      pattern: /^\/sandbox\/v1\/faults$/,
      status: 201,
      handler: async ({ req }) => {
        const fault: Fault = { id: randomUUID(), ...parseBody(faultBody, await readJson(req)) };
        faults.add(fault);
        return ok(fault);
      },
    },
    {
      method: 'DELETE',
      pattern: /^\/sandbox\/v1\/faults$/,
      handler: () => {
        faults.clear();
        return ok([]);
      },
    },
    { method: 'GET', pattern: /^\/sandbox\/v1\/requests$/, handler: () => ok(state.requests) },
    {
      method: 'GET',
      pattern: /^\/sandbox\/v1\/stats$/,
      handler: () => ok({ externalRequests: state.externalRequests(), memoryRss: process.memoryUsage().rss }),
    },
    {
      method: 'DELETE',
      pattern: /^\/sandbox\/v1\/requests$/,
      handler: () => {
        state.requests.length = 0;
        return ok([]);
      },
    },
  ];
}
