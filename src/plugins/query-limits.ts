import { EnvelopArmor } from '@escape.tech/graphql-armor';
import type { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { QueryLimitSettings } from '../config/config.ts';
import { ERROR_CODES, type ErrorCode, requestError } from '../errors/error-codes.ts';
import { DEFAULT_MAX_UPSTREAM_CALLS, OperationCosts, READ_COST } from '../execution/operation-cost.ts';
import type { ListResource } from '../loaders/loaders.ts';
import { INPUT_LIMITS, isNestedDeeper } from '../schema/input-limits.ts';
import { type CostMerchants, useCostLimit } from './cost-limit.ts';

export interface QueryLimits extends QueryLimitSettings {
  /** Hide "Did you mean …?" suggestions (they leak the schema when introspection is off). */
  blockFieldSuggestions: boolean;
  /** MAX_UPSTREAM_CALLS_PER_REQUEST, what a walk over a whole list counts. @default 100 */
  maxUpstreamCalls?: number;
  /** Whether a caller's merchant has an up-to-date index of a list (its walks count one read). @default none */
  walletIndexed?: (scope: string, list: ListResource) => boolean;
  /** Whose walk slots a caller scope takes, and how a new key's merchant is learnt. @default each key its own */
  merchants?: CostMerchants;
}

const CODE = 'QUERY_LIMIT_EXCEEDED' satisfies ErrorCode;

function tag(error: GraphQLError): void {
  // graphql-armor refuses from inside the parser, whose messages start with "Syntax Error: ".
  error.message = error.message.replace(/^Syntax Error: /, '');
  const extensions = error.extensions as Record<string, unknown>;
  extensions.code = CODE;
  extensions.http = { status: ERROR_CODES[CODE].status };
}

/** The walk cost of a whole-list read: at least this much, an operation waits for one of its key's slots. */
export function walkCostOf(limits: QueryLimits): number {
  return READ_COST * (limits.maxUpstreamCalls ?? DEFAULT_MAX_UPSTREAM_CALLS);
}

/**
 * Refuses hostile documents before any upstream call with QUERY_LIMIT_EXCEEDED, HTTP 400: depth,
 * aliases, tokens and directives (GraphQL Armor), cost (useCostLimit); and over-nested variables
 * with BAD_USER_INPUT. `costs` is shared with the hot path (default: one of its own).
 */
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
 * Refuses, before parsing, a request whose `variables` or `extensions` nest deeper than `maxDepth`
 * (no input does), with BAD_USER_INPUT, 400: code that walks them recursively would overflow the stack.
 */
export function useVariableDepthLimit(maxDepth: number): Plugin {
  return {
    onParams({ params, setResult }) {
      const error = nestingError(params, maxDepth);
      if (error) setResult({ errors: [error] });
    },
  };
}

/** useVariableDepthLimit's refusal, or null, for paths that take variables before the pipeline. */
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
