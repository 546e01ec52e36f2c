import { readFileSync } from 'node:fs';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../../src/schema/index.ts';
import { NodeByIdDocument } from '../../generated/graphql.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { withdrawalBody } from '../../support/sandbox.ts';

let gw: TestGateway;
let key: string;
let walletId: string;
let depositId: string;
let intentId: string;
const globalId = (type: string, id: string) => Buffer.from(`${type}:${id}`).toString('base64');

beforeAll(async () => {
  gw = await startTestGateway();
  const merchant = await gw.sandbox.world.merchant();
  key = merchant.key;
  const wallet = await gw.sandbox.world.wallet(merchant.id, { USDT: '500.25', TRX: '12' });
  walletId = wallet.id;
  depositId = (await gw.sandbox.world.deposit(walletId, { amount: '100.10', amountFee: '0.10' })).id;
  const created = await gw.sandbox.call('POST', '/external/v1/withdrawal-intents', {
    key,
    body: withdrawalBody(walletId, { amount: '20.00', serviceFeeMode: 'inclusive' }),
  });
  intentId = created.body.data.id;
  for (const s of ['reviewing', 'pending', 'completed'])
    await gw.sandbox.world.transitionWithdrawal(intentId, s);
});
afterAll(() => gw.close());

describe('schema', () => {
  it('matches the checked-in, sorted SDL (run `npm run schema:print` after a change)', () => {
    const checkedIn = readFileSync(new URL('../../../schema/schema.graphql', import.meta.url), 'utf8');
    expect(checkedIn).toBe(`${printSchema(lexicographicSortSchema(schema))}\n`);
  });
});

describe('resources', () => {
  it('exposes every wallet field, amounts verbatim', async () => {
    const { body } = await gw.request(
      `query($id: ID!) { wallet(id: $id) {
        id restId status rawStatus address createdAt updatedAt
        networkEndpoint { type provider identifier blockchainDetail { chainId address } }
        assets { currencyCode nickname createdAt updatedAt balance { availableAmount lockedAmount } }
        usdt: asset(currencyCode: "usdt") { balance { availableAmount } }
        eth: asset(currencyCode: "ETH") { currencyCode }
      } }`,
      { id: walletId },
      { key },
    );
    expect(body.errors).toBeUndefined();
    const wallet = (body.data as { wallet: Record<string, unknown> }).wallet;
    expect(wallet).toMatchObject({
      id: globalId('Wallet', walletId),
      restId: walletId,
      status: 'ACTIVE',
      rawStatus: 'active',
      networkEndpoint: { type: 'blockchain', provider: 'tron', blockchainDetail: { chainId: '728126428' } },
      usdt: { balance: { availableAmount: '580.2500000000000000' } },
      eth: null,
    });
    expect(wallet.address).toBe((wallet.networkEndpoint as { identifier: string }).identifier);
    expect(wallet.assets).toContainEqual(
      expect.objectContaining({
        currencyCode: 'USDT',
        balance: { availableAmount: '580.2500000000000000', lockedAmount: '0.0000000000000000' },
      }),
    );
    expect(wallet.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('exposes deposits with transaction, legs and source', async () => {
    const { body } = await gw.request(
      `query($id: ID!) { deposit(id: $id) {
        id restId status rawStatus currencyCode amount amountFee amountNet finalizedAt createdAt updatedAt walletRestId
        wallet { restId }
        source { type rail identifier }
        transaction { type provider hash blockchain { chainId hash fromAddress toAddress } legs { type rawType currencyCode amount } }
      } }`,
      { id: globalId('Deposit', depositId) },
      { key },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data).toMatchObject({
      deposit: {
        restId: depositId,
        status: 'COMPLETED',
        amount: '100.1000000000000000',
        amountFee: '0.1000000000000000',
        amountNet: '100.0000000000000000',
        wallet: { restId: walletId },
        walletRestId: walletId,
        source: { type: 'crypto', rail: 'tron' },
        transaction: {
          type: 'blockchain',
          legs: [
            {
              type: 'PRINCIPAL',
              rawType: 'principal',
              currencyCode: 'USDT',
              amount: '100.100000000000000000',
            },
            {
              type: 'NETWORK_FEE',
              rawType: 'network_fee',
              currencyCode: 'TRX',
              amount: '1.100000000000000000',
            },
          ],
        },
      },
    });
  });

  it('exposes withdrawal intents with the fee arithmetic as the REST API computed it', async () => {
    const { body } = await gw.request(
      `query($id: ID!) { withdrawalIntent(id: $id) {
        restId status serviceFeeMode rawServiceFeeMode amount amountFee amountNet amountGross submittedAt finalizedAt
        destination { type rail routingCode identifier } transaction { hash legs { type amount } } wallet { restId }
      } }`,
      { id: intentId },
      { key },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data).toMatchObject({
      withdrawalIntent: {
        restId: intentId,
        status: 'COMPLETED',
        serviceFeeMode: 'INCLUSIVE',
        rawServiceFeeMode: 'inclusive',
        amount: '20.0000000000000000',
        amountFee: '1.0000000000000000',
        amountNet: '19.0000000000000000',
        amountGross: '20.0000000000000000',
        destination: { type: 'crypto', rail: 'tron', routingCode: 'tron:mainnet' },
        transaction: {
          legs: [{ type: 'PRINCIPAL', amount: '19.000000000000000000' }, { type: 'NETWORK_FEE' }],
        },
        wallet: { restId: walletId },
      },
    });
  });

  it('maps a status the schema does not know to UNKNOWN and keeps the raw value', async () => {
    const weird = {
      ...(await gw.sandbox.call('GET', `/external/v1/deposits/${depositId}`, { key })).body.data,
      status: 'under_review',
    };
    await gw.sandbox.admin('POST', '/faults', {
      path: `/external/v1/deposits/${depositId}`,
      status: 200,
      body: JSON.stringify({ code: 'ok', message: 'OK', data: weird }),
      times: 1,
    });
    const { body } = await gw.request(`{ deposit(id: "${depositId}") { status rawStatus } }`, {}, { key });
    expect(body).toEqual({ data: { deposit: { status: 'UNKNOWN', rawStatus: 'under_review' } } });
  });
});

describe('ids', () => {
  it('takes the global id or the REST id, and answers null without an error for 404', async () => {
    for (const id of [walletId, globalId('Wallet', walletId)]) {
      const { body } = await gw.request(`query($id: ID!) { wallet(id: $id) { restId } }`, { id }, { key });
      expect(body).toEqual({ data: { wallet: { restId: walletId } } });
    }
    const missing = await gw.request(
      `{ wallet(id: "00000000-0000-4000-8000-000000000000") { restId } deposit(id: "${globalId('Deposit', '00000000-0000-4000-8000-000000000000')}") { id } }`,
      {},
      { key },
    );
    expect(missing.body).toEqual({ data: { wallet: null, deposit: null } });
  });

  it('answers another merchant\u2019s id like a missing one', async () => {
    const other = await gw.sandbox.world.merchant();
    const { body } = await gw.request(`{ wallet(id: "${walletId}") { restId } }`, {}, { key: other.key });
    expect(body).toEqual({ data: { wallet: null } });
  });

  it('refuses a global id of another type with BAD_USER_INPUT', async () => {
    const { body } = await gw.request(
      `{ wallet(id: "${globalId('Deposit', depositId)}") { restId } }`,
      {},
      { key },
    );
    expect(body.data).toEqual({ wallet: null });
    expect(body.errors).toEqual([
      {
        message: 'id is the global id of a Deposit, not of a Wallet',
        locations: [{ line: 1, column: 3 }],
        path: ['wallet'],
        extensions: { code: 'BAD_USER_INPUT', field: ['id'] },
      },
    ]);
  });

  it('says what it accepts when the REST API refuses an id as malformed: a global id or a REST id', async () => {
    for (const [field, type] of [
      ['wallet', 'Wallet'],
      ['deposit', 'Deposit'],
      ['withdrawalIntent', 'WithdrawalIntent'],
    ] as const) {
      const asRestId = await gw.request(`{ ${field}(id: "garbage") { id } }`, {}, { key });
      expect(asRestId.body.errors?.[0]).toMatchObject({
        message: expect.stringMatching(
          new RegExp(
            `^id must be a global id of a ${type} or its REST id; as a REST id it was refused \\(REST API: .+\\)$`,
          ),
        ),
        path: [field],
        extensions: { code: 'BAD_USER_INPUT', field: ['id'], upstream: { status: 400 } },
      });
      const inside = await gw.request(`{ ${field}(id: "${globalId(type, 'garbage')}") { id } }`, {}, { key });
      expect(inside.body.errors?.[0]?.message).toMatch(
        new RegExp(`^id is a global id of a ${type}, but the REST id inside it was refused \\(REST API: `),
      );
    }
  });

  it('node and nodes resolve every node type, and reject an id of an unknown type cleanly', async () => {
    const { body } = await gw.run(NodeByIdDocument, { id: globalId('WithdrawalIntent', intentId) }, key);
    expect(body.data?.node).toMatchObject({ __typename: 'WithdrawalIntent', withdrawalStatus: 'COMPLETED' });
    const many = await gw.request(
      `query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`,
      {
        ids: [
          globalId('Deposit', depositId),
          globalId('Wallet', walletId),
          globalId('Deposit', '00000000-0000-4000-8000-000000000000'),
        ],
      },
      { key },
    );
    expect(many.body).toEqual({
      data: {
        nodes: [
          { __typename: 'Deposit', id: globalId('Deposit', depositId) },
          { __typename: 'Wallet', id: globalId('Wallet', walletId) },
          null,
        ],
      },
    });
    const unknown = await gw.request(`{ node(id: "${globalId('Merchant', 'x')}") { id } }`, {}, { key });
    expect(unknown.body.data).toEqual({ node: null });
    expect(unknown.body.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT', field: ['id'] });
    expect(unknown.body.errors?.[0]?.message).toContain(
      'does not name a Wallet, Deposit or WithdrawalIntent',
    );
  });

  it('answers the same node asked twice in one request, by node, nodes or both', async () => {
    const wallet = globalId('Wallet', walletId);
    const deposit = globalId('Deposit', depositId);
    for (const [text, variables] of [
      [
        'query($id: ID!) { a: node(id: $id) { __typename id } b: node(id: $id) { __typename id } }',
        { id: wallet },
      ],
      ['query($id: ID!) { nodes(ids: [$id, $id]) { __typename id } }', { id: deposit }],
      [
        'query($id: ID!) { nodes(ids: [$id]) { __typename id } node(id: $id) { __typename id } }',
        { id: wallet },
      ],
    ] as const) {
      const { body } = await gw.request(text, variables, { key });
      expect(body.errors, text).toBeUndefined();
      const found = Object.values(body.data ?? {}).flat();
      expect(found.length, text).toBeGreaterThan(1);
      for (const node of found)
        expect(node, text).toEqual({ __typename: expect.any(String), id: variables.id });
    }
  });

  it('refuses "then" as a response key, with a code, before anything runs', async () => {
    gw.resetCalls();
    const { status, body } = await gw.request(
      '{ wallets(first: 1) { nodes { then: address } } }',
      {},
      { key },
    );
    expect(status).toBe(200);
    expect(body).toEqual({
      errors: [
        {
          message:
            'The response key "then" is reserved: a result object with a "then" member is taken for a promise. Choose another alias.',
          locations: [{ line: 1, column: 31 }],
          extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
        },
      ],
    });
    expect(gw.upstreamCalls()).toEqual([]);
  });

  it('never lets an id with path characters reach another REST route', async () => {
    gw.resetCalls();
    const { body } = await gw.request(`{ wallet(id: "../deposits") { restId } }`, {}, { key });
    expect(body.data).toEqual({ wallet: null });
    expect(body.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      upstream: { status: 400, code: 'bad_request' },
    });
    expect(gw.upstreamCalls()).toEqual(['GET /external/v1/wallets/..%2Fdeposits']);
  });
});
