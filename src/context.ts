import type { YogaInitialContext } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { WalletIndexing } from './loaders/index-builds.ts';
import { createLoaders, type Loaders } from './loaders/loaders.ts';
import type { LivePolling } from './subscriptions/live.ts';
import type { Caller } from './upstream/caller.ts';
import type { Callers } from './upstream/callers.ts';
import type { MerchantWalletClient } from './upstream/client.ts';
import type { WithdrawalService } from './withdrawals/service.ts';

/**
 * What every resolver gets, fresh for each GraphQL request. Resolvers read through `loaders` and write
 * through `withdrawals`; the upstream client is not here, so none can bypass per-request batching.
 */
export interface GatewayContext {
  /** The caller's Authorization header value, forwarded unchanged upstream; null when absent or malformed. */
  authorization: string | null;
  /** Whom upstream calls are for (upstream/callers.ts): `authorization`, scope, deadline, budget, reads. */
  caller: Caller;
  requestId: string;
  withdrawals: WithdrawalService;
  /** Subscriptions' pollers, shared by every request of the process. */
  live: LivePolling;
  loaders: Loaders;
  /**
   * For each event of a subscription: a new deadline, call budget and loaders, as a request of its
   * own, not the first event's stale loaders and the subscribing request's deadline.
   */
  renew(): void;
  /** This request's logger (with its request id), made on first call: most requests log nothing. */
  logger(): Logger;
}

/** What the gateway forwards: nothing else reaches the REST API (the sandbox checks by the REST API's). */
const BEARER = /^Bearer [A-Za-z0-9._~+/=-]{1,512}$/;

export function authorizationOf(request: Request): string | null {
  const header = request.headers.get('authorization');
  return header && isBearer(header) ? header : null;
}

/** Whether `value` is an Authorization value the gateway forwards. */
export function isBearer(value: string): boolean {
  return BEARER.test(value);
}

export function createContextFactory(deps: {
  client: MerchantWalletClient;
  withdrawals: WithdrawalService;
  live: LivePolling;
  logger: Logger;
  /** Each request's Caller, and each subscription event's. */
  callers: Callers;
  /** The wallet indexes (loaders/wallet-index.ts); absent: wallet lists are walked. */
  walletIndexing?: WalletIndexing | undefined;
}) {
  const build = (authorization: string | null, requestId: string): GatewayContext => {
    const callerNow = () => deps.callers.forRequest(authorization ?? '', requestId);
    const caller = callerNow();
    let logger: Logger | undefined;
    return {
      authorization,
      caller,
      requestId,
      withdrawals: deps.withdrawals,
      live: deps.live,
      loaders: createLoaders(deps.client, caller, deps.walletIndexing),
      // `this` is the context Yoga merged this object into, which the resolvers get.
      renew(this: GatewayContext) {
        this.caller = callerNow();
        this.loaders = createLoaders(deps.client, this.caller, deps.walletIndexing);
      },
      // A method: Yoga merges this object with Object.assign, which would call a getter every request.
      logger() {
        logger ??= deps.logger.child({ requestId });
        return logger;
      },
    };
  };
  return Object.assign(
    (initial: YogaInitialContext & { requestId: string }): GatewayContext =>
      build(authorizationOf(initial.request), initial.requestId),
    { build },
  );
}
