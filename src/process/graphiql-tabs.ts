import { readdirSync, readFileSync } from 'node:fs';
import { getOperationAST, Kind, parse, print } from 'graphql';

const DIRECTORY = new URL('../../schema/operations/', import.meta.url);

/**
 * The example operations by name, in the order a newcomer reads them, which is GraphiQL's tab
 * order (the first is the tab it opens on): the merchant's wallets, one wallet's screen (then the
 * same with @defer), the deposits across wallets, any item by id; then the one write, and watching
 * what it started; then the live feeds. Every file of schema/operations/ is named here once (a
 * test holds it): one not listed would come last, after these.
 */
export const EXAMPLE_ORDER = [
  'Dashboard',
  'WalletScreen',
  'WalletScreenDeferred',
  'ActivityFeed',
  'NodeById',
  'CreateWithdrawal',
  'WatchWithdrawal',
  'LiveDeposits',
  'LiveWithdrawals',
] as const;

/** The example operations in schema/operations/*.graphql, in EXAMPLE_ORDER. */
export function exampleOperations(): { file: string; name: string; text: string }[] {
  const rank = (name: string) => {
    const index = (EXAMPLE_ORDER as readonly string[]).indexOf(name);
    return index === -1 ? EXAMPLE_ORDER.length : index;
  };
  return readdirSync(DIRECTORY)
    .filter((file) => file.endsWith('.graphql'))
    .sort()
    .map((file) => {
      const text = readFileSync(new URL(file, DIRECTORY), 'utf8').trim();
      return { file, name: getOperationAST(parse(text))?.name?.value ?? file, text };
    })
    .sort((a, b) => rank(a.name) - rank(b.name));
}

/**
 * The example operations joined into one document: GraphiQL's default tab when there are no
 * demo variables to offer. The same files feed codegen and the tests' typed client.
 */
export function loadExampleOperations(): string {
  return exampleOperations()
    .map((example) => example.text)
    .join('\n\n');
}

/** What the examples need to run at once against a known world (the embedded sandbox's). */
export interface DemoVariables {
  /** The global id of one of the demo merchant's wallets. */
  walletId: string;
  /** The global id of the demo withdrawal: in flight, held in preparing until its first read by id. */
  withdrawalIntentId: string;
  /** A Tron address outside the platform, valid to withdraw to. */
  externalAddress: string;
  /** An idempotency key for the withdrawal example; fixed per process, so a second run replays. */
  idempotencyKey: string;
}

/** Atop the first tab in sandbox mode: where a newcomer finds what the demo wallets hold. */
export const DEMO_WALLETS_NOTE =
  '# Run this (Ctrl+Enter): your wallets\n' +
  '# and their balances. Every demo wallet,\n' +
  '# and amounts that show each refusal:\n' +
  '# docs/sandbox.md, "Demo wallets".';

/**
 * One GraphiQL tab per example operation, in EXAMPLE_ORDER (the first opens with DEMO_WALLETS_NOTE),
 * with a working value for each variable the operation requires, chosen by its name and type, else
 * its type alone: `$intentId: ID!` is a demo
 * withdrawal intent, any other `ID!` the demo wallet, a `CreateWithdrawalIntentInput!` a small
 * withdrawal from it. Optional variables keep their defaults.
 */
export function exampleTabs(demo: DemoVariables, headers: string | undefined) {
  const valueFor: Record<string, unknown> = {
    'intentId: ID!': demo.withdrawalIntentId,
    'ID!': demo.walletId,
    'CreateWithdrawalIntentInput!': {
      walletId: demo.walletId,
      serviceFeeMode: 'EXCLUSIVE',
      currencyCode: 'USDT',
      amount: '1.00',
      destination: { type: 'crypto', rail: 'tron', identifier: demo.externalAddress },
      idempotencyKey: demo.idempotencyKey,
    },
  };
  const variablesOf = (text: string): Record<string, unknown> | null => {
    const entries = (getOperationAST(parse(text))?.variableDefinitions ?? [])
      .filter((definition) => definition.type.kind === Kind.NON_NULL_TYPE)
      .map((definition) => {
        const name = definition.variable.name.value;
        const type = print(definition.type);
        return [name, valueFor[`${name}: ${type}`] ?? valueFor[type]] as const;
      });
    return entries.length ? Object.fromEntries(entries) : null;
  };
  return exampleOperations().map(({ text }, index) => {
    const variables = variablesOf(text);
    return {
      query: index === 0 ? `${DEMO_WALLETS_NOTE}\n${text}` : text,
      variables: variables && JSON.stringify(variables, null, 2),
      headers: headers ?? null,
    };
  });
}
