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

export interface QueryDeduplicationOptions {
  /** The caller's generation scope (MerchantWalletClient.generationScope); null: not shared. */
  generationScope: (context: GatewayContext) => string | null;
  /** What is shared, the hot path's too. @default new ResultSharing(): in flight only, none kept */
  sharing?: ResultSharing;
  /** Called for each query answered with another's result (the metrics). @default none */
  onShared?: (context: GatewayContext, how: SharedHow) => void;
}

/**
 * Identical queries of one caller share one execution (docs/architecture.md, Query deduplication):
 * one arriving while an identical one executes answers with its result (`in_flight`), and, when
 * `sharing` keeps results, one arriving while every REST answer it read is still cached (`kept`:
 * KeptResults' contract). Identical: the same parsed document, operation name, values of the
 * declared variables and `generationScope`, so callers never see each other's results, nor one from
 * before their withdrawal. Only keyed queries, and results without errors or extensions, are
 * shared; a kept result's data is frozen. Comes after every plugin that may refuse an operation,
 * and after useEagerStringify, whose text measures a kept result.
 */
export function useQueryDeduplication(options: QueryDeduplicationOptions): Plugin<GatewayContext> {
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
 * Results shared between identical queries of one caller: executing, and with `kept`, kept after.
 * A query's key is its generation scope in clear, then a digest of the rest (useQueryDeduplication).
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
    // A digest, so that a key's length (room in the cache) does not grow with the variables'.
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
 * The values of the variables `operation` declares, as text; null when text cannot tell them apart
 * (`1e400` arrives as Infinity, which JSON writes as null), or past the stack: then unshared.
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
