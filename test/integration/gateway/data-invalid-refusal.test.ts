import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CreateWithdrawalDocument } from '../../generated/graphql.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { EXTERNAL_TRON_ADDRESS } from '../../support/sandbox.ts';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
beforeEach(() => gw.resetCalls());
afterEach(() => gw.sandbox.admin('DELETE', '/faults'));
afterAll(() => gw.close());

const posts = () => gw.upstreamCalls().filter((c) => c.startsWith('POST'));

describe('a data_invalid naming no field, then a failed wallet GET', () => {
  it("answers the POST's own refusal (nothing created), not the wallet GET's outage, and keeps nothing for the key", async () => {
    const merchant = await gw.sandbox.world.merchant();
    const wallet = await gw.sandbox.world.wallet(merchant.id, { USDT: '100', TRX: '10' });
    await gw.sandbox.admin('POST', '/faults', {
      method: 'POST',
      path: '/external/v1/withdrawal-intents',
      status: 400,
      body: JSON.stringify({ code: 'data_invalid', message: 'senderWalletId is invalid', data: null }),
      times: 1,
    });
    await gw.sandbox.admin('POST', '/faults', {
      method: 'GET',
      path: `/external/v1/wallets/${wallet.id}`,
      status: 503,
      times: null,
    });
    const variables = {
      input: {
        walletId: wallet.id,
        serviceFeeMode: 'EXCLUSIVE',
        currencyCode: 'USDT',
        amount: '10.00',
        destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS },
        idempotencyKey: 'k-data-invalid-get-503',
      },
    } as never;
    const first = await gw.run(CreateWithdrawalDocument, variables, merchant.key);
    expect(posts()).toHaveLength(1);
    // The POST was refused (a 400: nothing created). The wallet GET that would name the field
    // failed; its outage says nothing of the POST, so the answer is the REST API's refusal.
    expect(first.body.errors).toBeUndefined();
    expect(first.body.data?.createWithdrawalIntent).toMatchObject({ __typename: 'DataInvalidError' });
    // Definite: nothing kept, so the same key asks the REST API again (one more POST, not a replay).
    await gw.sandbox.admin('DELETE', '/faults');
    gw.resetCalls();
    const second = await gw.run(CreateWithdrawalDocument, variables, merchant.key);
    expect(posts()).toHaveLength(1);
    expect(second.body.data?.createWithdrawalIntent).toMatchObject({
      __typename: 'CreateWithdrawalIntentSuccess',
    });
  });
});
