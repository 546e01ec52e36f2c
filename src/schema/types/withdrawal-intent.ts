import { USER_ERRORS } from '../../errors/error-codes.ts';
import { AFTER_DESCRIPTION, liveValue, resumeFrom } from '../../subscriptions/feed.ts';
import { withdrawalIntentsUpdated, withdrawalIntentUpdated } from '../../subscriptions/withdrawal-feeds.ts';
import type { WithdrawalIntentDTO } from '../../upstream/types.ts';
import {
  DataInvalidError,
  userErrorClass,
  WithdrawalRefusedError,
  type WithdrawalUserError,
} from '../../withdrawals/user-errors.ts';
import { builder } from '../builder.ts';
import { connectionType, resolvePagedConnection } from '../connections.ts';
import { ServiceFeeMode, statusFilter, WithdrawalIntentStatus } from '../enums.ts';
import { loadById, restIdOf } from '../global-ids.ts';
import { INPUT_LIMITS } from '../input-limits.ts';
import { wantsItemWallets } from '../lookahead.ts';
import { restLoad } from '../rest-loads.ts';
import { resolveWalletConnection } from '../wallet-connections.ts';
import { Transaction } from './transaction.ts';
import { loadedNode, Wallet } from './wallet.ts';

export const WithdrawalIntent = builder.objectRef<WithdrawalIntentDTO>('WithdrawalIntent');

const WithdrawalDestination = builder
  .objectRef<WithdrawalIntentDTO['destination']>('WithdrawalDestination')
  .implement({
    description: 'Where a withdrawal goes (REST `destination`).',
    fields: (t) => ({
      type: t.exposeString('type', { description: 'crypto' }),
      rail: t.exposeString('rail', { description: 'tron' }),
      routingCode: t.exposeString('routingCode', { description: 'The network, as <network>:<subnetwork>.' }),
      identifier: t.exposeString('identifier', { description: "The recipient's address." }),
    }),
  });

builder.node(WithdrawalIntent, {
  description: 'A request to move funds from a merchant wallet to an external address.',
  // Replaced once built by a synchronous encoder of the same global id (schema/index.ts).
  id: { resolve: (intent) => intent.id },
  loadMany: (ids, ctx) =>
    Promise.all(
      ids.map(async (id) => loadedNode(await ctx.loaders.withdrawalIntent.load(id), 'WithdrawalIntent')),
    ),
  fields: (t) => ({
    restId: t.exposeString('id', { description: 'The REST API identifier of this withdrawal intent.' }),
    wallet: t.field({
      type: Wallet,
      nullable: true,
      description: 'The source wallet.',
      extensions: restLoad({ route: 'GET /wallets/{id}', batched: 'GET /wallets', loads: 'batch', calls: 1 }),
      resolve: (w, _args, ctx) => ctx.loaders.wallet.load(w.wallet.id),
    }),
    walletRestId: t.string({ description: "The source wallet's REST id.", resolve: (w) => w.wallet.id }),
    transaction: t.expose('transaction', {
      type: Transaction,
      nullable: true,
      description: 'null until an on-chain transaction exists (e.g. while preparing).',
    }),
    destination: t.expose('destination', {
      type: WithdrawalDestination,
      description: "The recipient's network and address.",
    }),
    status: t.field({
      type: WithdrawalIntentStatus.ref,
      description: 'The intent status; UNKNOWN for a value this schema does not know yet (see rawStatus).',
      resolve: (w) => WithdrawalIntentStatus.fromRaw(w.status),
    }),
    rawStatus: t.exposeString('status', { description: 'The status exactly as the REST API sent it.' }),
    serviceFeeMode: t.field({
      type: ServiceFeeMode.ref,
      description: 'How the service fee was charged: it decides amountNet and amountGross.',
      resolve: (w) => ServiceFeeMode.fromRaw(w.serviceFeeMode),
    }),
    rawServiceFeeMode: t.exposeString('serviceFeeMode', {
      description: 'The fee mode exactly as the REST API sent it.',
    }),
    amount: t.expose('amount', { type: 'Decimal', description: 'Requested amount.' }),
    amountFee: t.expose('amountFee', { type: 'Decimal', description: 'Service fee.' }),
    amountNet: t.expose('amountNet', { type: 'Decimal', description: 'What the recipient receives.' }),
    amountGross: t.expose('amountGross', { type: 'Decimal', description: 'What leaves the wallet.' }),
    submittedAt: t.expose('submittedAt', { type: 'DateTime', description: 'When the intent was submitted.' }),
    finalizedAt: t.expose('finalizedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the intent reached a final status; null until then.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the intent was created.' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When the intent last changed.' }),
  }),
});

export const WithdrawalIntentConnection = connectionType(WithdrawalIntent, 'WithdrawalIntent');

builder.queryFields((t) => ({
  withdrawalIntent: t.field({
    type: WithdrawalIntent,
    nullable: true,
    description:
      'A withdrawal intent by its global id or its REST id; null when it does not exist for this merchant.',
    args: {
      id: t.arg.id({ required: true, description: 'A WithdrawalIntent global id, or a REST intent id.' }),
    },
    extensions: restLoad({ route: 'GET /withdrawal-intents/{id}', loads: 'byId', calls: 1 }),
    resolve: (_root, { id }, ctx) =>
      loadById((restId) => ctx.loaders.withdrawalIntent.load(restId), String(id), 'WithdrawalIntent'),
  }),
  withdrawalIntents: t.connection(
    {
      type: WithdrawalIntent,
      nullable: true,
      description:
        "The merchant's withdrawal intents, newest first. Null only when its REST call failed; the error names this path and sibling fields keep their data.",
      extensions: restLoad({ route: 'GET /withdrawal-intents', loads: 'page', calls: 1 }),
      args: {
        status: t.arg({
          type: [WithdrawalIntentStatus.ref],
          required: false,
          description: 'Any of these statuses (REST `statusIn`).',
        }),
      },
      resolve: (_root, args, ctx, info) => {
        const statusIn = statusFilter(args.status);
        if (wantsItemWallets(args, info)) ctx.loaders.prefetchWallets();
        return resolvePagedConnection(`withdrawalIntents|${statusIn ?? ''}`, args, (request) =>
          ctx.loaders.withdrawalIntentsPage({ ...request, statusIn }),
        );
      },
    },
    WithdrawalIntentConnection,
  ),
}));

builder.objectField(Wallet, 'withdrawalIntents', (t) =>
  t.connection(
    {
      type: WithdrawalIntent,
      nullable: true,
      description:
        "This wallet's withdrawal intents, newest first, read out of the merchant's list as Wallet.deposits are (the REST API has no wallet filter). Null only when its REST call failed; the error names this path and sibling fields keep their data.",
      extensions: restLoad({ route: 'GET /withdrawal-intents', loads: 'scan', calls: 1 }),
      args: {
        status: t.arg({
          type: [WithdrawalIntentStatus.ref],
          required: false,
          description: 'Any of these statuses (REST `statusIn`).',
        }),
      },
      resolve: (wallet, args, ctx) => {
        const statusIn = statusFilter(args.status);
        return resolveWalletConnection(
          `wallet:${wallet.id}:withdrawalIntents|${statusIn ?? ''}`,
          args,
          ctx.loaders.walletList('withdrawalIntents'),
          wallet.id,
          statusIn && {
            matches: (item) => statusIn.includes(item.status),
            counted: ctx.loaders.walletList('withdrawalIntents', statusIn),
          },
        );
      },
    },
    WithdrawalIntentConnection,
  ),
);

// --- createWithdrawalIntent ---------------------------------------------------------------------

const UserError = builder.interfaceRef<WithdrawalUserError>('UserError').implement({
  description: 'A business failure the client can act on. `code` is the REST API error code verbatim.',
  fields: (t) => ({
    code: t.exposeString('code', {
      description:
        'The REST API error code, e.g. withdrawal_intent.balance_insufficient; stable, for programs.',
    }),
    message: t.exposeString('message', { description: 'What went wrong, for people; may change.' }),
  }),
});

// One object type per row of USER_ERRORS (errors/error-codes.ts), all implementing UserError.
const USER_ERROR_TYPES: (new (...args: never[]) => WithdrawalUserError)[] = USER_ERRORS.map((row) => {
  const ErrorClass = userErrorClass(row.code);
  if (ErrorClass === DataInvalidError) {
    builder.objectType(DataInvalidError, {
      name: row.type,
      description: row.description,
      interfaces: [UserError],
      fields: (t) => ({
        field: t.exposeStringList('field', {
          nullable: true,
          description: 'Path of the offending input field, e.g. ["input", "amount"], when known.',
        }),
      }),
    });
  } else {
    builder.objectType(ErrorClass, {
      name: row.type,
      description: row.description,
      interfaces: [UserError],
      fields: () => ({}),
    });
  }
  return ErrorClass;
});
// The general member: a refusal with a code this release does not know (a newer release's, replayed).
builder.objectType(WithdrawalRefusedError, {
  name: 'WithdrawalRefusedError',
  description:
    'The REST API refused the withdrawal with a code this version of the schema has no type for yet (a refusal a newer gateway release kept for this idempotency key): nothing was created. Read `code` and `message`; every refusal also matches `... on UserError`.',
  interfaces: [UserError],
  fields: () => ({}),
});
USER_ERROR_TYPES.push(WithdrawalRefusedError);

const DestinationInput = builder.inputType('WithdrawalDestinationInput', {
  description: 'Where the withdrawal goes (REST `destination`).',
  fields: (t) => ({
    type: t.string({ required: true, description: 'Only crypto.' }),
    rail: t.string({ required: true, description: 'Only tron.' }),
    identifier: t.string({
      required: true,
      description: `The recipient Tron address (${INPUT_LIMITS.tronAddress} characters).`,
    }),
  }),
});

const CreateWithdrawalIntentInput = builder.inputType('CreateWithdrawalIntentInput', {
  description:
    'A withdrawal of USDT from one of your wallets to a Tron address (REST POST /withdrawal-intents).',
  fields: (t) => ({
    walletId: t.id({ required: true, description: 'The sender wallet: its global id or its REST id.' }),
    serviceFeeMode: t.field({
      type: ServiceFeeMode.ref,
      required: true,
      description: 'INCLUSIVE: the fee comes out of amount. EXCLUSIVE: it is charged on top.',
    }),
    currencyCode: t.string({ required: true, description: 'Only USDT.' }),
    amount: t.field({ type: 'Decimal', required: true, description: 'Positive, at most 2 decimal places.' }),
    destination: t.field({ type: DestinationInput, required: true, description: 'The recipient.' }),
    idempotencyKey: t.string({
      required: false,
      description:
        'Makes retries safe: the same key with the same input returns the first result (for 24 h, per API key) instead of creating a second intent. A refusal of the API key (401, 403) keeps nothing. 1-255 printable ASCII characters.',
    }),
  }),
});

builder.mutationField('createWithdrawalIntent', (t) =>
  t.field({
    type: WithdrawalIntent,
    description:
      'Creates a withdrawal intent; business failures are typed results (UserError). Never retried: ' +
      'on OUTCOME_UNKNOWN retry with the same idempotencyKey: it returns the intent the first attempt created, or sends it. ' +
      'With extensions.reason SEVERAL_CANDIDATES or COMPETING_ATTEMPT nothing is sent; the key stays blocked.',
    extensions: restLoad({ route: 'POST /withdrawal-intents', loads: 'write', calls: 1 }),
    args: {
      input: t.arg({ type: CreateWithdrawalIntentInput, required: true, description: 'The withdrawal.' }),
    },
    errors: {
      types: USER_ERROR_TYPES,
      result: {
        name: 'CreateWithdrawalIntentSuccess',
        description: 'The intent was created (or, with a known idempotencyKey, the one created first).',
      },
      union: {
        name: 'CreateWithdrawalIntentPayload',
        description:
          'The created intent, or one of the business failures (each implements UserError: select `... on UserError { code message }`).',
      },
      dataField: {
        name: 'withdrawalIntent',
        description: 'The withdrawal intent, status PREPARING when new.',
      },
    },
    resolve: async (_root, { input }, ctx) => {
      const intent = await ctx.withdrawals.create(ctx.caller, input);
      // The wallet's balances changed: later reads in this request must not see the old ones.
      ctx.loaders.wallet.clear(intent.wallet.id);
      ctx.loaders.withdrawalIntent.prime(intent.id, intent);
      return { ...intent };
    },
  }),
);

// --- Live status (subscriptions/live.ts polls the REST API for these) ---------------------------

builder.subscriptionFields((t) => ({
  withdrawalIntentUpdated: t.field({
    type: WithdrawalIntent,
    description:
      'One withdrawal intent as it is now, then each time its status (or anything else) changes; the stream ends after a final status. Ends with NOT_FOUND when no such intent exists for this merchant, and with UNAUTHENTICATED or FORBIDDEN when the REST API stops accepting the key.',
    extensions: restLoad({ route: 'GET /withdrawal-intents/{id}', loads: 'poll', calls: 0 }),
    args: {
      id: t.arg.id({ required: true, description: 'A WithdrawalIntent global id, or a REST intent id.' }),
      after: t.arg.string({
        required: false,
        description: AFTER_DESCRIPTION,
      }),
    },
    subscribe: (_root, { id, after }, ctx) => {
      const restId = restIdOf(String(id), 'WithdrawalIntent');
      return ctx.live.watch(ctx.caller, withdrawalIntentUpdated(restId), resumeFrom(after, ctx));
    },
    resolve: liveValue,
  }),
  withdrawalIntentsUpdated: t.field({
    type: WithdrawalIntent,
    description:
      "Each of the merchant's withdrawal intents created or changed after subscribing, as it is then (nothing at first: query withdrawalIntents for the list). The stream ends only with UNAUTHENTICATED or FORBIDDEN, when the REST API stops accepting the key.",
    extensions: restLoad({ route: 'GET /withdrawal-intents', loads: 'poll', calls: 0 }),
    args: {
      status: t.arg({
        type: [WithdrawalIntentStatus.ref],
        required: false,
        description: 'Only intents that now have one of these statuses, e.g. [COMPLETED, FAILED].',
      }),
      after: t.arg.string({
        required: false,
        description: AFTER_DESCRIPTION,
      }),
    },
    subscribe: (_root, args, ctx) => {
      const statuses = statusFilter(args.status);
      return ctx.live.watch(ctx.caller, withdrawalIntentsUpdated(statuses), resumeFrom(args.after, ctx));
    },
    resolve: liveValue,
  }),
}));
