import { readdirSync, readFileSync } from 'node:fs';
import {
  type GraphQLField,
  type GraphQLObjectType,
  getNamedType,
  getOperationAST,
  isCompositeType,
  isNonNullType,
  isObjectType,
  OperationTypeNode,
  parse,
} from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { globalIdOf } from '../../../src/schema/global-ids.ts';
import { schema } from '../../../src/schema/index.ts';
import { type RestLoad, restCallsOf, restLoadOf, restLoadsOf } from '../../../src/schema/rest-loads.ts';
import { BASE_PATH } from '../../../src/upstream/call.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { EXTERNAL_TRON_ADDRESS, withdrawalBody } from '../../support/sandbox.ts';

/**
 * Each field's declaration (schema/rest-loads.ts) against the REST calls it makes. Every field of
 * the types a request reaches is asked alone with its smallest selection: a declared field adds
 * exactly its declared calls, any other field none. Then each kind's sharing is checked on every
 * field of that kind: a batch field under a list of two parents, a by-id field asked twice, a scan
 * under two wallets. A new REST-backed field without a declaration fails here, by name.
 */

let gw: TestGateway;
let key: string;
const ids = { wallet: '', otherWallet: '', deposit: '', otherDeposit: '', intent: '', otherIntent: '' };

beforeAll(async () => {
  // No wallet index: its background builds would add calls no request made.
  gw = await startTestGateway({ config: { walletIndex: { maxBytes: 0 } } });
  const merchant = await gw.sandbox.world.merchant();
  key = merchant.key;
  ids.wallet = (await gw.sandbox.world.wallet(merchant.id)).id;
  ids.otherWallet = (await gw.sandbox.world.wallet(merchant.id)).id;
  ids.deposit = (await gw.sandbox.world.deposit(ids.wallet, { amount: '5.00' })).id;
  ids.otherDeposit = (await gw.sandbox.world.deposit(ids.otherWallet, { amount: '6.00' })).id;
  const intent = async (walletId: string) => {
    const created = await gw.sandbox.call('POST', '/external/v1/withdrawal-intents', {
      key,
      body: withdrawalBody(walletId),
    });
    return (created.body.data as { id: string }).id;
  };
  ids.intent = await intent(ids.wallet);
  ids.otherIntent = await intent(ids.otherWallet);
});
beforeEach(() => gw.resetCalls());
afterAll(() => gw.close());

/** Where a field of each type is reached from, around its selection. */
const REACHED: Record<string, (selection: string) => string> = {
  Query: (s) => `{ __typename ${s} }`,
  Wallet: (s) => `{ wallet(id: "${ids.wallet}") { id ${s} } }`,
  Deposit: (s) => `{ deposit(id: "${ids.deposit}") { id ${s} } }`,
  WithdrawalIntent: (s) => `{ withdrawalIntent(id: "${ids.intent}") { id ${s} } }`,
};

/** The root list of each type's items: two parents of a field below the root. */
const LISTS: Record<string, string> = {
  Wallet: 'wallets',
  Deposit: 'deposits',
  WithdrawalIntent: 'withdrawalIntents',
};

/** The required arguments of the root fields, as this merchant's data has them. */
function requiredArguments(coordinate: string): string {
  const values: Record<string, () => string> = {
    'Query.wallet': () => `id: "${ids.wallet}"`,
    'Query.deposit': () => `id: "${ids.deposit}"`,
    'Query.withdrawalIntent': () => `id: "${ids.intent}"`,
    'Query.node': () => `id: "${globalIdOf('Wallet', ids.wallet)}"`,
    'Query.nodes': () => `ids: ["${globalIdOf('Deposit', ids.deposit)}"]`,
    'Wallet.asset': () => 'currencyCode: "USDT"',
  };
  return values[coordinate]?.() ?? '';
}

function selectionOf(type: GraphQLObjectType, field: GraphQLField<unknown, unknown>): string {
  const coordinate = `${type.name}.${field.name}`;
  const required = field.args.filter((a) => isNonNullType(a.type) && a.defaultValue === undefined);
  const args = requiredArguments(coordinate);
  if (required.length > 0 && !args) throw new Error(`no argument values for ${coordinate}: add them above`);
  const sub = isCompositeType(getNamedType(field.type)) ? ' { __typename }' : '';
  return `${field.name}${args ? `(${args})` : ''}${sub}`;
}

/** The calls of `asked` that `base` did not make (as a multiset). */
function beyond(asked: readonly string[], base: readonly string[]): string[] {
  const left = [...base];
  return asked.filter((call) => {
    const i = left.indexOf(call);
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
}

/** Whether a call the sandbox saw (`GET /external/v1/wallets/w-1`) is of a declared route (`GET /wallets/{id}`). */
function ofRoute(route: string, call: string): boolean {
  const [method, path = ''] = route.split(' ');
  const pattern = path
    .split(/(\{[^}]*\})/)
    .map((part) => {
      if (!part.startsWith('{')) return part.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
      const names = part.slice(1, -1).split(',');
      return names.length > 1 ? `(?:${names.join('|')})` : '[^/?]+';
    })
    .join('');
  return new RegExp(`^${method} ${BASE_PATH}${pattern}(?:\\?.*)?$`).test(call);
}

async function callsOf(query: string): Promise<string[]> {
  gw.resetCalls();
  const { body } = await gw.request(query, {}, { key });
  expect(body.errors, query).toBeUndefined();
  return gw.upstreamCalls();
}

describe('each field makes the REST calls it declares', () => {
  for (const typename of Object.keys(REACHED)) {
    const type = schema.getType(typename) as GraphQLObjectType;
    for (const field of Object.values(type.getFields())) {
      const coordinate = `${typename}.${field.name}`;
      const declared = restLoadOf(field);
      it(`${coordinate}: ${declared ? `${declared.calls} (${declared.loads}, ${declared.route})` : 'none'}`, async () => {
        const reach = REACHED[typename] as (s: string) => string;
        const base = await callsOf(reach(''));
        const extra = beyond(await callsOf(reach(selectionOf(type, field))), base);
        expect(
          extra.length,
          `${coordinate} made ${extra.length} REST calls (${extra.join(', ')}); declare them where the field is written: extensions: restLoad({ route, loads, calls }) (src/schema/rest-loads.ts)`,
        ).toBe(declared?.calls ?? 0);
        if (declared)
          expect(
            extra.filter((call) => !ofRoute(declared.route, call)),
            `${coordinate} declares ${declared.route}`,
          ).toEqual([]);
      });
    }
  }

  it('createWithdrawalIntent: one POST, and a replay of its key only the key proof', async () => {
    const declared = restLoadOf(
      (schema.getMutationType() as GraphQLObjectType).getFields().createWithdrawalIntent as GraphQLField<
        unknown,
        unknown
      >,
    ) as RestLoad;
    const mutation = `mutation { createWithdrawalIntent(input: { walletId: "${ids.wallet}", serviceFeeMode: EXCLUSIVE, currencyCode: "USDT", amount: "1.00", destination: { type: "crypto", rail: "tron", identifier: "${EXTERNAL_TRON_ADDRESS}" }, idempotencyKey: "rest-loads-1" }) { __typename } }`;
    const calls = await callsOf(mutation);
    expect(calls).toHaveLength(declared.calls);
    expect(calls.every((call) => ofRoute(declared.route, call))).toBe(true);
    // A replay proves the key still works before answering from the store (docs/withdrawals.md).
    expect(await callsOf(mutation)).toEqual(['GET /external/v1/wallets?page=1&size=1']);
  });

  it('every subscription is a poll: no REST call at subscribe, none declared', () => {
    const fields = Object.values((schema.getSubscriptionType() as GraphQLObjectType).getFields());
    expect(fields.length).toBeGreaterThan(0);
    for (const field of fields)
      expect(restLoadOf(field), field.name).toMatchObject({ loads: 'poll', calls: 0 });
  });
});

describe('each kind shares its calls as it says', () => {
  const declared = [...restLoadsOf(schema)];
  const of = (kind: RestLoad['loads']) => declared.filter(([, load]) => load.loads === kind);

  it('the schema declares every kind it has a field for', () => {
    expect(of('batch').map(([c]) => c)).toEqual(['Deposit.wallet', 'WithdrawalIntent.wallet']);
    expect(of('scan').map(([c]) => c)).toEqual(['Wallet.deposits', 'Wallet.withdrawalIntents']);
  });

  it.each(of('batch'))('%s (batch): one call for two parents in two wallets', async (coordinate, load) => {
    const [typename, name] = coordinate.split('.') as [string, string];
    const list = typename === 'Deposit' ? 'deposits' : 'withdrawalIntents';
    const base = await callsOf(`{ ${list}(first: 2) { nodes { id } } }`);
    const extra = beyond(await callsOf(`{ ${list}(first: 2) { nodes { id ${name} { id } } } }`), base);
    expect(extra).toHaveLength(1);
    expect(ofRoute(load.batched ?? load.route, extra[0] as string), extra[0]).toBe(true);
  });

  it.each(of('byId').filter(([c]) => !c.startsWith('Query.')))(
    '%s (byId below the root): one call per distinct parent, the same parent twice one',
    async (coordinate) => {
      const [typename, name] = coordinate.split('.') as [string, string];
      const type = schema.getType(typename) as GraphQLObjectType;
      const selection = selectionOf(type, type.getFields()[name] as GraphQLField<unknown, unknown>);
      const reach = REACHED[typename] as (s: string) => string;
      const twice = reach(selection).replace(
        /^\{ (\w+)(\(.*?\)) \{ (.*) \} \}$/,
        '{ a: $1$2 { $3 } b: $1$2 { $3 } }',
      );
      expect(beyond(await callsOf(twice), await callsOf(reach('')))).toHaveLength(1);
      const list = LISTS[typename] as string;
      const base = await callsOf(`{ ${list}(first: 2) { nodes { id } } }`);
      const asked = await callsOf(`{ ${list}(first: 2) { nodes { id ${selection} } } }`);
      expect(beyond(asked, base)).toHaveLength(2);
    },
  );

  it.each(of('byId').filter(([c]) => c.startsWith('Query.') && c !== 'Query.nodes'))(
    '%s (byId): the same id asked twice is one call; two ids two, or one of its batched route',
    async (coordinate, load) => {
      const name = coordinate.split('.')[1] as string;
      const [a, b] =
        name === 'deposit'
          ? [ids.deposit, ids.otherDeposit]
          : name === 'withdrawalIntent'
            ? [ids.intent, ids.otherIntent]
            : name === 'node'
              ? [globalIdOf('Deposit', ids.deposit), globalIdOf('Deposit', ids.otherDeposit)]
              : [ids.wallet, ids.otherWallet];
      const field = (alias: string, id: string) => `${alias}: ${name}(id: "${id}") { __typename }`;
      expect(await callsOf(`{ ${field('a', a)} ${field('b', a)} }`)).toHaveLength(1);
      const two = await callsOf(`{ ${field('a', a)} ${field('b', b)} }`);
      if (load.batched) {
        expect(two).toHaveLength(1);
        expect(ofRoute(load.batched, two[0] as string), two[0]).toBe(true);
      } else expect(two).toHaveLength(2);
    },
  );

  it.each(of('scan'))('%s (scan): one read of the merchant list for two wallets', async (coordinate) => {
    const name = coordinate.split('.')[1] as string;
    const base = await callsOf('{ wallets(first: 2) { nodes { id } } }');
    const asked = await callsOf(`{ wallets(first: 2) { nodes { id ${name}(first: 1) { nodes { id } } } } }`);
    expect(asked.length - base.length).toBe(1);
  });

  it.each(of('page'))('%s (page): the same window asked twice is one call', async (coordinate) => {
    const name = coordinate.split('.')[1] as string;
    const field = (alias: string) => `${alias}: ${name}(first: 2) { nodes { id } }`;
    expect(await callsOf(`{ ${field('a')} ${field('b')} }`)).toHaveLength(1);
  });

  it('only object types reached from Query hold declared fields', () => {
    for (const coordinate of restLoadsOf(schema).keys()) {
      const typename = coordinate.split('.')[0] as string;
      expect(isObjectType(schema.getType(typename)), coordinate).toBe(true);
      expect([...Object.keys(REACHED), 'Mutation', 'Subscription'], coordinate).toContain(typename);
    }
  });
});

describe("each screen of schema/operations makes the calls its fields declare (docs/schema.md's table)", () => {
  const dir = new URL('../../../schema/operations/', import.meta.url);
  const screens = readdirSync(dir)
    .filter((file) => file.endsWith('.graphql'))
    .map((file) => ({ file, document: parse(readFileSync(new URL(file, dir), 'utf8')) }))
    .filter(({ document }) => getOperationAST(document)?.operation !== OperationTypeNode.SUBSCRIPTION);

  it.each(screens)('$file', async ({ file, document }) => {
    const variables: Record<string, unknown> = {
      id: file.startsWith('node') ? globalIdOf('Deposit', ids.deposit) : ids.wallet,
      input: {
        walletId: ids.otherWallet,
        serviceFeeMode: 'EXCLUSIVE',
        currencyCode: 'USDT',
        amount: '1.00',
        destination: { type: 'crypto', rail: 'tron', identifier: EXTERNAL_TRON_ADDRESS },
      },
    };
    gw.resetCalls();
    const response = await gw.gateway.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'multipart/mixed',
        authorization: `Bearer ${key}`,
      },
      body: JSON.stringify({ query: readFileSync(new URL(file, dir), 'utf8'), variables }),
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    expect(text).not.toContain('"errors"');
    expect(gw.upstreamCalls(), file).toHaveLength(restCallsOf(schema, document, variables));
  });
});
