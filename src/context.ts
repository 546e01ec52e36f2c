import type { YogaInitialContext } from 'graphql-yoga';
import type { Logger } from 'pino';
import { createLoaders, type Loaders } from './loaders.ts';
import type { Caller, MerchantWalletClient } from './upstream/client.ts';
import type { WithdrawalService } from './withdrawals.ts';

/** What every resolver gets. Built fresh for each GraphQL request. */
export interface GatewayContext {
  /** The caller's Authorization header value, forwarded unchanged upstream; null when absent or malformed. */
  auth: string | null;
  /** `auth` prepared for the upstream client (cache scope computed once per request). */
  caller: Caller;
  requestId: string;
  client: MerchantWalletClient;
  withdrawals: WithdrawalService;
  loaders: Loaders;
  /** This request's logger (with its request id), made on first call: most requests log nothing. */
  logger(): Logger;
}

/** `Bearer <token>` with a token of URL-safe characters; anything else never reaches the REST API. */
const BEARER = /^Bearer [A-Za-z0-9._~+/=-]{1,512}$/;

export function authorizationOf(request: Request): string | null {
  const header = request.headers.get('authorization');
  return header && BEARER.test(header) ? header : null;
}

export function createContextFactory(deps: {
  client: MerchantWalletClient;
  withdrawals: WithdrawalService;
  logger: Logger;
  /** Time budget of one GraphQL request for all its upstream calls; undefined: none. */
  requestDeadlineMs?: number;
}) {
  return (initial: YogaInitialContext & { requestId?: string }): GatewayContext => {
    const auth = authorizationOf(initial.request);
    const requestId = initial.requestId ?? 'unknown';
    const deadline = deps.requestDeadlineMs === undefined ? undefined : Date.now() + deps.requestDeadlineMs;
    const caller = deps.client.caller(auth ?? '', deadline);
    let logger: Logger | undefined;
    return {
      auth,
      caller,
      requestId,
      client: deps.client,
      withdrawals: deps.withdrawals,
      loaders: createLoaders(deps.client, caller),
      // A method, not a getter: Yoga merges this object into its context with Object.assign, which
      // would call a getter and make the child logger for every request.
      logger() {
        logger ??= deps.logger.child({ requestId });
        return logger;
      },
    };
  };
}
