import { EnvelopArmor } from '@escape.tech/graphql-armor';
import type { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { QueryLimitSettings } from '../config/config.ts';
import { ERROR_CODES, type ErrorCode, requestError } from '../errors/error-codes.ts';
import { DEFAULT_MAX_UPSTREAM_CALLS, OperationCosts, READ_COST } from '../execution/operation-cost.ts';
import type { ListResource } from '../loaders/loaders.ts';
import { INPUT_LIMITS, isNestedDeeper } from '../schema/input-limits.ts';
import { type CostMerchants, useCostLimit } from './cost-limit.ts';

/**
 * Hostile documents are refused before any upstream call, with HTTP 400 and
 * `extensions.code: QUERY_LIMIT_EXCEEDED`: depth, aliases, tokens and directives by GraphQL Armor,
 * cost by cost-limit.ts (connections weighted by first/last), body size by max-request-bytes.ts.
 * Variables nested deeper than any input of the schema are refused before anything walks them.
 */

export interface QueryLimits extends QueryLimitSettings {
  /** Hide "Did you mean …?" suggestions (they leak the schema when introspection is off). */
  blockFieldSuggestions: boolean;
  /**
   * MAX_UPSTREAM_CALLS_PER_REQUEST: the most REST reads one request may make, which is what a
   * walk over a whole list is counted at (see operationCost). Default: the configuration's, 100.
   */
  maxUpstreamCalls?: number;
  /**
   * Whether the caller's merchant has an up-to-date wallet index of a merchant list (`deposits`,
   * `withdrawalIntents`, the list a `scan` field reads): its whole-list reads (totalCount, `last`
   * without `before`) then count one read, not the call budget. Default: none has.
   */
  walletIndexed?: (scope: string, list: ListResource) => boolean;
  /** Whose walk slots a caller scope takes, and how a new key's merchant is learnt (merchants.ts); default, its own. */
  merchants?: CostMerchants;
}

const CODE = 'QUERY_LIMIT_EXCEEDED' satisfies ErrorCode;

function tag(error: GraphQLError): void {
  // graphql-armor refuses from inside the parser, whose errors start with "Syntax Error: ".
  error.message = error.message.replace(/^Syntax Error: /, '');
  const extensions = error.extensions as Record<string, unknown>;
  extensions.code = CODE;
  extensions.http = { status: ERROR_CODES[CODE].status };
}

/** The walk cost of a whole-list read: at least this much, an operation waits for one of its key's slots. */
export function walkCostOf(limits: QueryLimits): number {
  return READ_COST * (limits.maxUpstreamCalls ?? DEFAULT_MAX_UPSTREAM_CALLS);
}

/** `costs`: the cost of operations, shared with the hot path; default: one of its own. */
export function useQueryLimits(
  limits: QueryLimits,
  costs: OperationCosts = new OperationCosts(
    limits.maxUpstreamCalls ?? DEFAULT_MAX_UPSTREAM_CALLS,
    limits.walletIndexed,
  ),
): Plugin[] {
  const onReject = [(_context: unknown, error: GraphQLError) => tag(error)];
  const armor = new EnvelopArmor({
    maxDepth: { n: limits.maxDepth, ignoreIntrospection: true, onReject },
    maxAliases: { n: limits.maxAliases, onReject },
    maxTokens: { n: limits.maxTokens, onReject },
    maxDirectives: { n: limits.maxDirectives, onReject },
    // Cost is ours: Armor's cost limit does not know connections.
    costLimit: { enabled: false },
    blockFieldSuggestion: { enabled: limits.blockFieldSuggestions },
  });
  return [
    useVariableDepthLimit(INPUT_LIMITS.variableDepth),
    ...(armor.protect().plugins as Plugin[]),
    useCostLimit({
      maxCost: limits.maxCost,
      costs,
      walksPerKey: limits.walksPerKey,
      ...(limits.merchants && { merchants: limits.merchants }),
    }),
    useLimitStatus(),
  ];
}

/**
 * Refuses a request whose `variables` or `extensions` nest objects and lists more than `maxDepth`
 * levels, with HTTP 400 and BAD_USER_INPUT, before the document is parsed. No input of the schema
 * nests that deep, so such variables cannot be valid; and code that walks them recursively (query
 * deduplication's key, a scalar's parser, a log line) would overflow the stack on 100 000 levels.
 */
export function useVariableDepthLimit(maxDepth: number): Plugin {
  return {
    onParams({ params, setResult }) {
      const error = nestingError(params, maxDepth);
      if (error) setResult({ errors: [error] });
    },
  };
}

/**
 * The refusal of a request whose `variables` or `extensions` nest deeper than `maxDepth`, or null.
 * For every path that takes a client's variables before the HTTP pipeline does (a WebSocket's
 * subscribe message is serialised again to be sent through it).
 */
export function nestingError(
  params: { variables?: unknown; extensions?: unknown },
  maxDepth: number = INPUT_LIMITS.variableDepth,
): GraphQLError | null {
  const tooDeep = (['variables', 'extensions'] as const).find((name) =>
    isNestedDeeper(params[name], maxDepth),
  );
  if (!tooDeep) return null;
  return requestError(
    'BAD_USER_INPUT',
    `The request's ${tooDeep} nest objects and lists more than ${maxDepth} levels deep; no input of this API does.`,
    { status: 400 },
  );
}

/** Armor's token limit fails in the parser, where Yoga answers 200; a refused document is a 400. */
function useLimitStatus(): Plugin {
  return {
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || !('errors' in result) || !result.errors?.length) return;
      if (!result.errors.some((e) => (e as GraphQLError).extensions?.code === CODE)) return;
      setResult({ ...result, extensions: { ...result.extensions, http: { status: 400 } } });
    },
  };
}
