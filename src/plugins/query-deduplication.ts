import { createHash } from 'node:crypto';
import {
  type DocumentNode,
  type ExecutionResult,
  getOperationAST,
  type OperationDefinitionNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../context.ts';
import { deepFreeze } from '../shared/deep-freeze.ts';
import type { KeptResult, KeptResults } from './kept-results.ts';

/** How a query was answered with another's result: joined while it executed, or kept after. */
export type SharedHow = 'in_flight' | 'kept';

/** Each request answered with another's result, and how (the access log's `sharedResult`). */
const sharedResults = new WeakMap<GatewayContext, SharedHow>();

/** How query deduplication answered the request of `context` with another's result; null: it executed its own. */
export function sharedResultOf(context: GatewayContext): SharedHow | null {
  return sharedResults.get(context) ?? null;
}

/**
 * Identical queries from the same caller share one execution, instead of executing again. The
 * upstream client already coalesces and caches their REST calls; this spares the GraphQL work on
 * top (execution and serialisation are most of a request's CPU), which matters when many screens
 * of one merchant poll the same dashboard through the same key.
 *
 * A query is shared two ways:
 * - **In flight**: one that arrives while an identical one executes waits for it and answers with
 *   its result. It sees data at most as old as the moment the first query started, as with
 *   upstream coalescing.
 * - **Kept** (`kept`): after the execution, while every REST answer it read is still cached: the
 *   contract is KeptResults' (kept-results.ts). Without it, cached reads finish executions so
 *   quickly that hardly any identical query arrives during one
 *   (docs/benchmark.md#why-the-caches-are-built-this-way).
 *
 * Identical means: the same parsed document (Yoga's parser cache hands out one object per query
 * text), operation name and values of the variables the operation declares (others are ignored
 * by graphql-js, and so here), and the same `generationScope`: the caller's scope and its
 * invalidation generation, so callers never see each other's results, and a query that arrives
 * after the caller's withdrawal succeeded or ended with an unknown outcome (here or on another
 * replica of the fleet) never joins one that started before it, nor gets a result kept from before it.
 *
 * Only queries (never mutations) with a key are shared, and only a result without errors or
 * extensions: a failed result stays with its own request (its errors name that request's
 * failure), and each joiner then executes on its own. A kept result's data is frozen, so no
 * request can change what another receives.
 *
 * Run it after every plugin that may refuse an operation (authentication, limits, rate limits): a
 * request is checked like any other before it is answered with a shared result. And after
 * useEagerStringify, whose text of the result is what a kept result is measured by.
 */
export function useQueryDeduplication(options: {
  /** The caller's generation scope (MerchantWalletClient.generationScope); null: not shared. */
  generationScope: (context: GatewayContext) => string | null;
  /** What is shared: results in flight and kept; default: in flight only. The hot path (src/execution/hot-path.ts) shares the same. */
  sharing?: ResultSharing;
  /** Called for each query answered with another's result (metrics; the access log reads sharedResultOf). */
  onShared?: (context: GatewayContext, how: SharedHow) => void;
}): Plugin<GatewayContext> {
  const sharing = options.sharing ?? new ResultSharing();
  return {
    onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      const context = args.contextValue;
      const scope = options.generationScope(context);
      if (scope === null) return;
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation !== 'query') return;
      const key = sharing.keyOf(scope, args.document, args.operationName, operation, args.variableValues);
      if (key === null) return;
      const kept = sharing.kept(key);
      if (kept) {
        markShared(context, 'kept');
        options.onShared?.(context, 'kept');
        setResultAndStopExecution(kept.result);
        return;
      }
      const pending = sharing.pending(key);
      if (pending) {
        // Envelop waits for a promise returned from onExecute before it executes.
        return pending.then((result) => {
          if (!result) return;
          markShared(context, 'in_flight');
          options.onShared?.(context, 'in_flight');
          setResultAndStopExecution(result);
        });
      }
      setExecuteFn(async (executionArgs) => {
        const execution = Promise.resolve(executeFn(executionArgs) as ExecutionResult);
        sharing.track(key, execution);
        return execution;
      });
      if (!sharing.keeps) return;
      return {
        // After useEagerStringify's: the text it made is the one every request sends.
        onExecuteDone({ result }) {
          if (Symbol.asyncIterator in result) return;
          const { stringify } = result as { stringify?: (value: ExecutionResult) => string };
          const text = typeof stringify === 'function' ? stringify(result) : undefined;
          sharing.keep(context, key, result, text);
        },
      };
    },
  };
}

/** Records that the request of `context` was answered with another's result (the access log's `sharedResult`). */
export function markShared(context: GatewayContext, how: SharedHow): void {
  sharedResults.set(context, how);
}

/**
 * Results shared between identical queries of one caller: the ones executing (in flight) and,
 * with `kept`, the ones kept after (KeptResults' contract). The key of a query is its caller's
 * generation scope in clear, then a digest of its document, operation name and the values of the
 * variables it declares (useQueryDeduplication says why each part).
 */
export class ResultSharing {
  private readonly inFlight = new Map<string, Promise<ExecutionResult | null>>();
  /** A number per parsed document, for keys: documents the document cache dropped are forgotten. */
  private readonly documentIds = new WeakMap<DocumentNode, number>();
  private nextDocumentId = 0;
  private readonly keptResults: KeptResults | undefined;

  constructor(kept?: KeptResults) {
    this.keptResults = kept;
  }

  get keeps(): boolean {
    return this.keptResults !== undefined;
  }

  /** The sharing key of a query, or null when its variables cannot be told apart as text. */
  keyOf(
    scope: string,
    document: DocumentNode,
    operationName: string | null | undefined,
    operation: OperationDefinitionNode,
    variables: unknown,
  ): string | null {
    const values = serialised(operation, variables);
    if (values === null) return null;
    let id = this.documentIds.get(document);
    if (id === undefined) {
      id = this.nextDocumentId++;
      this.documentIds.set(document, id);
    }
    // A digest, so that a key's length does not grow with the variables' (the kept results'
    // keys take room in the cache); the scope stays in clear, first.
    const digest = createHash('sha256')
      .update(`${id}\n${operationName ?? ''}\n${values}`)
      .digest('base64url');
    return `${scope}\n${digest}`;
  }

  kept(key: string): KeptResult<ExecutionResult> | undefined {
    return this.keptResults?.get<ExecutionResult>(key);
  }

  /** The shareable result of the identical query executing now (null when it was not shareable). */
  pending(key: string): Promise<ExecutionResult | null> | undefined {
    return this.inFlight.get(key);
  }

  /** Shares `execution` with the identical queries that arrive while it runs. */
  track(key: string, execution: Promise<ExecutionResult>): void {
    const shared = execution.then(
      (result) => (isShareable(result) ? result : null),
      () => null,
    );
    this.inFlight.set(key, shared);
    void shared.then(() => {
      if (this.inFlight.get(key) === shared) this.inFlight.delete(key);
    });
  }

  /** Keeps a finished result for the identical queries after it, when it may be (KeptResults). */
  keep(context: GatewayContext, key: string, result: ExecutionResult, text?: string): void {
    const keep = this.keptResults;
    const { reads } = context.caller;
    if (!keep || !isShareable(result) || reads.currentUntil === Number.NEGATIVE_INFINITY) return;
    // Frozen once kept (synchronously, before any request can receive it), and only then.
    if (keep.keep(context.caller.scope, key, { result, text: text ?? JSON.stringify(result) }, reads))
      deepFreeze(result.data);
  }
}

/**
 * The values of the variables `operation` declares, as text; null when they cannot be told apart
 * as text: numbers JSON has no text for (`1e400` arrives as Infinity, which JSON.stringify would
 * write as null, the text of another request's `null`), or nesting past the stack (which
 * useVariableDepthLimit refuses earlier). Such a query then runs on its own, unshared.
 */
function serialised(operation: OperationDefinitionNode, variables: unknown): string | null {
  const declared: Record<string, unknown> = {};
  const given = (variables ?? {}) as Record<string, unknown>;
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    if (Object.hasOwn(given, name)) declared[name] = given[name];
  }
  try {
    return JSON.stringify(declared, finiteNumbersOnly);
  } catch {
    return null;
  }
}

function finiteNumbersOnly(_key: string, value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new RangeError('not a JSON number');
  return value;
}

function isShareable(
  result: ExecutionResult | AsyncIterable<unknown>,
): result is ExecutionResult & { stringify?: (value: ExecutionResult) => string } {
  return !(Symbol.asyncIterator in result) && !result.errors && !result.extensions;
}
