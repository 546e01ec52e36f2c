import { readdirSync, readFileSync } from 'node:fs';
import { getOperationAST, Kind, parse, print } from 'graphql';

const DIRECTORY = new URL('../schema/operations/', import.meta.url);

/** The example operations in schema/operations/*.graphql, by file, sorted. */
function exampleFiles(): { name: string; text: string }[] {
  return readdirSync(DIRECTORY)
    .filter((name) => name.endsWith('.graphql'))
    .sort()
    .map((name) => ({ name, text: readFileSync(new URL(name, DIRECTORY), 'utf8').trim() }));
}

/**
 * The example operations joined into one document: GraphiQL's default tab when there are no
 * demo variables to offer. The same files feed codegen and the tests' typed client.
 */
export function loadExampleOperations(): string {
  return exampleFiles()
    .map((file) => file.text)
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

/**
 * One GraphiQL tab per example operation, with a working value for each variable the operation
 * requires, chosen by its name and type, else its type alone: `$intentId: ID!` is a demo
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
  return exampleFiles().map(({ text }) => {
    const variables = variablesOf(text);
    return {
      query: text,
      variables: variables && JSON.stringify(variables, null, 2),
      headers: headers ?? null,
    };
  });
}
