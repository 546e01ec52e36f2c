import type { ExecutionArgs, ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../context.ts';
import { type ErrorCode, requestError } from '../errors/error-codes.ts';
import { type OperationCosts, READ_COST } from '../execution/operation-cost.ts';
import type { Caller } from '../upstream/caller.ts';

/**
 * Whole-list walks (cost ≥ READ_COST × the call budget) of one merchant executing at once. Bounded
 * here: identical walks share their REST calls, so the transport's fair share cannot bound them.
 */
export const WALKS_PER_KEY = 2;

const CODE = 'QUERY_LIMIT_EXCEEDED' satisfies ErrorCode;

/** Whose walk slots a caller takes, and how its merchant is learnt before its cost counts (merchants.ts). */
export interface CostMerchants {
  groupOf: (scope: string) => string;
  learn?: {
    known: (scope: string) => boolean;
    merchantOf: (caller: Caller) => Promise<void>;
  };
}

export interface CostLimitOptions {
  /** QUERY_MAX_COST: an operation costing more is refused before it runs. @default 20000 */
  maxCost: number;
  /** How operations are costed (shared with the hot path, src/execution/hot-path.ts). */
  costs: OperationCosts;
  /** QUERY_WALKS_PER_KEY: a merchant's whole-list walks executing at once; 0 for no wait. @default 2 */
  walksPerKey?: number;
  /** Whose walk slots a caller takes, and how a new key's merchant is learnt. @default each key its own */
  merchants?: CostMerchants;
}

/**
 * Refuses an operation costing more than `maxCost` (docs/schema.md#what-a-query-costs) before it
 * runs, with QUERY_LIMIT_EXCEEDED and `extensions: { cost, maxCost }`. A whole-list walk then waits,
 * first come first served, for one of its merchant's `walksPerKey` slots until its deadline (then
 * RATE_LIMITED, nothing run).
 */
export function useCostLimit({
  maxCost,
  costs,
  walksPerKey = WALKS_PER_KEY,
  merchants = { groupOf: (scope) => scope },
}: CostLimitOptions): Plugin {
  const { groupOf, learn } = merchants;
  const { maxUpstreamCalls } = costs;
  const costOf = (args: ExecutionArgs, allIndexed = false): number =>
    costs.costOf(
      args.schema,
      args.document,
      args.operationName,
      args.variableValues as Record<string, unknown> | undefined,
      (args.contextValue as Partial<GatewayContext> | undefined)?.caller?.scope,
      allIndexed,
    );
  const walks = new KeyedSlots(walksPerKey);
  const walkCost = READ_COST * maxUpstreamCalls;
  type Hook = { args: ExecutionArgs; setResultAndStopExecution(result: ExecutionResult): void };
  /** The cost, or null once the operation is refused for it. */
  const check = ({ args, setResultAndStopExecution }: Hook): number | null => {
    const cost = costOf(args);
    if (cost <= maxCost) return cost;
    const error = requestError(
      CODE,
      `The operation's cost ${cost} exceeds the limit of ${maxCost}: ask for fewer items per connection, nest fewer connections, or select totalCount (or \`last\` without \`before\`) on a wallet's deposits or withdrawal intents less often: until the merchant's wallet index is built in the background, each reads the merchant's whole list.`,
      { extensions: { cost, maxCost } },
    );
    setResultAndStopExecution({ data: null, errors: [error] });
    return null;
  };
  /**
   * Only a whole-list walk waits; anything else passes synchronously, since a returned promise
   * delays later plugins a tick, and query deduplication joins only requests of one tick.
   */
  const waitForWalk = (hook: Hook) => {
    const context = hook.args.contextValue as Partial<GatewayContext> | undefined;
    // A new key's merchant is learnt first (one read) only when its indexes could change the verdict.
    const caller = context?.caller;
    if (learn && caller && context.authorization && !learn.known(caller.scope)) {
      const cost = costOf(hook.args);
      const indexedCost = costOf(hook.args, true);
      if ((cost > maxCost && indexedCost <= maxCost) || (cost >= walkCost && indexedCost < walkCost))
        return learn.merchantOf(caller).then(() => admit(hook));
    }
    return admit(hook);
  };
  const admit = (hook: Hook) => {
    const cost = check(hook);
    const context = hook.args.contextValue as Partial<GatewayContext> | undefined;
    if (cost === null || cost < walkCost || walksPerKey <= 0) return;
    if (!context?.authorization || !context.caller) return;
    const entered = walks.enter(groupOf(context.caller.scope), context.caller.deadline);
    const settle = (release: (() => void) | null) => {
      if (!release) {
        const error = requestError(
          'RATE_LIMITED',
          `This merchant's keys had ${walksPerKey} operations reading its whole list running until this request's deadline; retry when they are done, or select totalCount less often.`,
          { extensions: { retryAfterSeconds: 1, walksPerKey } },
        );
        hook.setResultAndStopExecution({ data: null, errors: [error] });
        return;
      }
      return {
        onExecuteDone({ result }: { result: unknown }) {
          if (!isAsyncIterable(result)) {
            release();
            return;
          }
          return { onEnd: release };
        },
      };
    };
    return entered instanceof Promise ? entered.then(settle) : settle(entered);
  };
  return {
    onExecute: waitForWalk,
    // A subscription's events are polled reads of one item each, paced by the poller.
    onSubscribe: (hook) => void check(hook),
  };
}

/**
 * At most `perKey` holders per key at once, the others in the key's FIFO queue. A slot comes back
 * by its release function, or at the holder's deadline at the latest (a failed execution's).
 */
class KeyedSlots {
  private readonly keys = new Map<string, { holders: number; waiting: (() => void)[] }>();
  private readonly perKey: number;

  constructor(perKey: number) {
    this.perKey = perKey;
  }

  /** A release function once `key` has a free slot, or null when `deadline` passes first. */
  enter(key: string, deadline: number | undefined): Promise<(() => void) | null> | (() => void) | null {
    let entry = this.keys.get(key);
    if (!entry) {
      entry = { holders: 0, waiting: [] };
      this.keys.set(key, entry);
    }
    if (entry.holders < this.perKey) {
      entry.holders++;
      return this.releaser(key, deadline);
    }
    const queue = entry.waiting;
    return new Promise((resolve) => {
      const timer =
        deadline === undefined
          ? undefined
          : setTimeout(
              () => {
                queue.splice(queue.indexOf(go), 1);
                resolve(null);
              },
              Math.max(0, deadline - Date.now()),
            );
      const go = () => {
        clearTimeout(timer);
        resolve(this.releaser(key, deadline));
      };
      queue.push(go);
    });
  }

  /** Gives the slot back once: to the oldest waiting holder, else frees it. */
  private releaser(key: string, deadline: number | undefined): () => void {
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      clearTimeout(backstop);
      const entry = this.keys.get(key);
      if (!entry) return;
      const next = entry.waiting.shift();
      if (next) {
        next();
        return;
      }
      entry.holders--;
      if (entry.holders <= 0) this.keys.delete(key);
    };
    const backstop =
      deadline === undefined ? undefined : setTimeout(release, Math.max(0, deadline - Date.now()));
    backstop?.unref();
    return release;
  }
}
