import fc from 'fast-check';
import {
  type GraphQLArgument,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  getNamedType,
  isAbstractType,
  isCompositeType,
  isEnumType,
  isInterfaceType,
  isNonNullType,
  isObjectType,
  isUnionType,
  parse,
  validate,
} from 'graphql';

/**
 * Random valid GraphQL requests built from the schema, for differential tests: a document, its
 * variables and operation name, as a template whose ids and cursors are symbolic, so that one
 * generated request can be sent by each merchant of a test world (`instantiate`).
 *
 * What the documents hold: aliases (among them `then`, `constructor`, `toString`, `__proto__`),
 * repeated response keys (the same field and arguments selected again with another selection and
 * other directives), named fragments spread in several places and inline fragments on objects,
 * interfaces and unions, `@skip`/`@include` with literal conditions and with variables (required,
 * nullable with a default, sent as true, false, null or not at all), nested connections with
 * `first`/`last` and cursors taken from earlier answers, `node`/`nodes` with the merchant's own,
 * another merchant's, repeated and malformed ids, status filters, string literals as well as
 * variables, and mutations whose input the REST API refuses (never one that moves money, so the
 * world stays still).
 *
 * Every draw shrinks towards the simplest choice (the first option, no directive, no alias), so
 * a failing document shrinks to the few selections that make it fail.
 */

/** What a symbolic value resolves to, per merchant (see `instantiate`). */
export interface WorldPools {
  /** This merchant's node ids by type: global ids and REST ids. */
  own: Record<NodeTypename, { global: string[]; rest: string[] }>;
  /** Cursors this merchant's answers held, per list (LISTS; a wallet's lists: its first wallet's). */
  cursors: Record<List, string[]>;
  /** createWithdrawalIntent inputs the REST API refuses for this merchant, by name. */
  refusedInputs: Record<RefusedInput, Record<string, unknown>>;
}

export type NodeTypename = 'Wallet' | 'Deposit' | 'WithdrawalIntent';
export const REFUSED_INPUTS = [
  'balanceInsufficient',
  'foreignWallet',
  'destinationInvalid',
  'destinationInternal',
  'feeNotCovered',
  'dailyLimit',
] as const;
export type RefusedInput = (typeof REFUSED_INPUTS)[number];

/** A generated request, before `instantiate` gives its symbolic values one merchant's ids. */
export interface RequestTemplate {
  query: string;
  variables: Record<string, unknown>;
  operationName?: string;
}

/**
 * Symbolic values: "@own:Wallet:global:2" (this merchant's third wallet's global id, modulo how
 * many it has), "@foreign:Deposit:rest:0" (the other merchant's), "@cursor:Query.deposits:5" (the
 * sixth cursor of the merchant's deposit list), "@input:foreignWallet".
 * They appear as variable values and inside string literals of the document.
 */
const SYMBOL =
  /@(own|foreign):(Wallet|Deposit|WithdrawalIntent):(global|rest):(\d+)|@cursor:(\w+\.\w+):(\d+)/g;

/** The request `template` as merchant `own` sends it; `foreign` is another merchant of the world. */
export function instantiate(
  template: RequestTemplate,
  own: WorldPools,
  foreign: WorldPools,
): { query: string; variables: Record<string, unknown>; operationName?: string } {
  const resolve = (text: string): string =>
    text.replace(SYMBOL, (_match, whose, type, form, index, list, cursor) => {
      if (list !== undefined) return pick(own.cursors[list as List] ?? [], Number(cursor)) ?? 'no-cursor';
      const pools = (whose === 'own' ? own : foreign).own[type as NodeTypename];
      return pick(form === 'global' ? pools.global : pools.rest, Number(index)) ?? 'no-id';
    });
  const value = (v: unknown): unknown => {
    if (typeof v === 'string') {
      const input = /^@input:(\w+)$/.exec(v);
      if (input) return own.refusedInputs[input[1] as RefusedInput];
      return resolve(v);
    }
    if (Array.isArray(v)) return v.map(value);
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, value(x)]));
    return v;
  };
  return {
    query: resolve(template.query),
    variables: value(template.variables) as Record<string, unknown>,
    ...(template.operationName !== undefined && { operationName: template.operationName }),
  };
}

/** Node types a root field's `id` names. */
const NODE_FIELDS: Record<string, NodeTypename> = {
  wallet: 'Wallet',
  deposit: 'Deposit',
  withdrawalIntent: 'WithdrawalIntent',
};

/** The lists cursors come from: `Parent.field`, the wallet's lists those of the first wallet. */
export const LISTS = [
  'Query.wallets',
  'Query.deposits',
  'Query.withdrawalIntents',
  'Wallet.deposits',
  'Wallet.withdrawalIntents',
] as const;
export type List = (typeof LISTS)[number];

function pick<T>(items: readonly T[], index: number): T | undefined {
  return items.length === 0 ? undefined : items[index % items.length];
}

export interface GeneratorOptions {
  /** Deepest nesting of selection sets below the operation. */
  maxDepth?: number;
  /** Most selections drawn per selection set (before repeats). */
  maxWidth?: number;
}

/**
 * An arbitrary of requests on `schema`, valid by construction (`isValid` checks; a filter would
 * not do: fast-check's `gen` redraws a rejected value forever).
 */
export function requestTemplates(schema: GraphQLSchema, options: GeneratorOptions = {}) {
  return fc.gen().map((g) => build(schema, g, options));
}

/** Whether a generated request's document validates (the generator aims at valid ones only). */
export function isValid(schema: GraphQLSchema, template: RequestTemplate): boolean {
  return validate(schema, parse(template.query)).length === 0;
}

type Gen = fc.GeneratorValue;

/** One document, drawn choice by choice from `g`. */
function build(schema: GraphQLSchema, g: Gen, options: GeneratorOptions): RequestTemplate {
  const maxDepth = options.maxDepth ?? 4;
  const maxWidth = options.maxWidth ?? 4;
  /** An integer in [0, max], shrinking to 0. */
  const nat = (max: number): number => g(fc.nat, { max });
  /** True with probability `p`; shrinks to false. */
  const chance = (p: number): boolean => nat(99) >= 100 - Math.round(p * 100);
  const choose = <T>(items: readonly T[]): T => items[nat(items.length - 1)] as T;

  // What kind of document this is, drawn first: apps' documents mostly use variables and no
  // directives (and those are the ones compiled execution runs); the rest vary one thing or more.
  const style = {
    directives: chance(0.5),
    literals: chance(0.35),
    oddAliases: chance(0.15),
    mistakes: chance(0.3),
  };

  const variableDefinitions: string[] = [];
  const variables: Record<string, unknown> = {};
  const newVariable = (type: string, value: unknown, defaultValue?: string): string => {
    const name = `v${variableDefinitions.length}`;
    variableDefinitions.push(`$${name}: ${type}${defaultValue === undefined ? '' : ` = ${defaultValue}`}`);
    if (value !== undefined) variables[name] = value;
    return `$${name}`;
  };

  /** An id for a field expecting `expected` (any node type when null), now and then another's. */
  const symbolicId = (expected: NodeTypename | null): string => {
    const types: NodeTypename[] = ['Wallet', 'Deposit', 'WithdrawalIntent'];
    const type = expected && !(style.mistakes && chance(0.2)) ? expected : choose(types);
    const whose = style.mistakes && chance(0.3) ? 'foreign' : 'own';
    const form = expected && chance(0.25) ? 'rest' : 'global';
    return `@${whose}:${type}:${form}:${nat(3)}`;
  };
  const MALFORMED_IDS = ['nope', 'V2FsbGV0Ong=', 'Tm9wZTox', '', 'x'.repeat(300)];
  const idValue = (expected: NodeTypename | null): string =>
    style.mistakes && chance(0.2) ? choose(MALFORMED_IDS) : symbolicId(expected);
  /** A cursor of the list `list` (from an earlier answer), now and then of another list or none. */
  const cursorValue = (list: string): string => {
    if (style.mistakes && chance(0.3))
      return chance(0.3) ? choose(['bad-cursor', 'YWJj']) : `@cursor:${choose(LISTS)}:${nat(9)}`;
    return `@cursor:${list}:${nat(9)}`;
  };

  /** A literal or a variable for an argument of type `type`, or undefined to leave it out. */
  const argumentValue = (parentName: string, fieldName: string, arg: GraphQLArgument): string | undefined => {
    const type = arg.type;
    const required = isNonNullType(type);
    if (!required && !chance(arg.name === 'after' || arg.name === 'before' ? 0.25 : 0.5)) return undefined;
    const asVariable = !(style.literals && chance(0.5));
    switch (arg.name) {
      case 'id': {
        const id = idValue(NODE_FIELDS[fieldName] ?? null);
        return asVariable ? newVariable(String(type), id) : JSON.stringify(id);
      }
      case 'ids': {
        const ids = Array.from({ length: nat(3) }, () =>
          chance(0.3) ? '@own:Wallet:global:0' : idValue(null),
        );
        return asVariable
          ? newVariable(String(type), ids)
          : `[${ids.map((id) => JSON.stringify(id)).join(', ')}]`;
      }
      case 'first':
      case 'last': {
        const n = style.mistakes && chance(0.1) ? choose([-1, 1001]) : nat(3);
        if (!asVariable) return String(n);
        if (chance(0.3)) return newVariable('Int', undefined, String(n));
        return newVariable('Int', chance(0.1) ? null : n);
      }
      case 'after':
      case 'before': {
        const cursor = cursorValue(`${parentName}.${fieldName}`);
        return asVariable ? newVariable('String', cursor) : JSON.stringify(cursor);
      }
      case 'status': {
        const enumType = getNamedType(type);
        if (!isEnumType(enumType)) return undefined;
        const values = enumType.getValues().map((v) => v.name);
        const chosen = Array.from({ length: 1 + nat(1) }, () => choose(values));
        return asVariable ? newVariable(String(type), chosen) : `[${chosen.join(', ')}]`;
      }
      case 'currencyCode': {
        const code = style.mistakes && chance(0.3) ? 'EUR' : choose(['USDT', 'TRX']);
        return asVariable ? newVariable('String!', code) : JSON.stringify(code);
      }
      case 'input': {
        const input = `@input:${choose(REFUSED_INPUTS)}`;
        return newVariable(String(type), input);
      }
      default:
        throw new Error(`no generator for argument ${fieldName}(${arg.name})`);
    }
  };

  const directives = (): string => {
    if (!style.directives || !chance(0.25)) return '';
    const name = choose(['include', 'skip']);
    let condition: string;
    const form = nat(3);
    if (form === 0) condition = choose(['true', 'false']);
    else if (form === 1) condition = newVariable('Boolean!', choose([true, false]));
    else if (form === 2)
      condition = newVariable('Boolean', choose([true, false, null]), choose(['true', 'false']));
    else condition = newVariable('Boolean', undefined, choose(['true', 'false']));
    return ` @${name}(if: ${condition})`;
  };

  const ALIASES = ['a', 'b', 'node', 'id', 'x1'];
  const ODD_ALIASES = ['then', 'constructor', 'toString', '__proto__', 'valueOf', 'hasOwnProperty'];
  const alias = (): string => (style.oddAliases && chance(0.3) ? choose(ODD_ALIASES) : choose(ALIASES));

  interface Fragment {
    name: string;
    on: GraphQLCompositeType;
    body: string;
  }
  const fragments: Fragment[] = [];
  let fragmentNames = 0;
  /**
   * Fields that meet under one response key must be the same field with the same arguments
   * (validation's OverlappingFieldsCanBeMerged): a response key keeps, per object type it may land
   * on, the field and arguments it was first drawn with.
   */
  const heads = new Map<string, { field: string; head: string }>();
  /** Even on types that exclude each other, one response key must have one return type. */
  const keyTypes = new Map<string, string>();
  let freshKeys = 0;
  /** Whether `key` may name `field` (of return type `returns`) on `type`; else a fresh key is due. */
  const fits = (type: GraphQLCompositeType, key: string, field: string, returns: string): boolean => {
    if ((keyTypes.get(key) ?? returns) !== returns) return false;
    return possible(type).every((t) => (heads.get(`${t.name}.${key}`)?.field ?? field) === field);
  };
  const headOf = (type: GraphQLCompositeType, key: string) => {
    for (const t of possible(type)) {
      const found = heads.get(`${t.name}.${key}`);
      if (found) return found;
    }
    return undefined;
  };
  const setHead = (
    type: GraphQLCompositeType,
    key: string,
    head: { field: string; head: string },
    returns: string,
  ) => {
    keyTypes.set(key, returns);
    for (const t of possible(type)) heads.set(`${t.name}.${key}`, head);
  };

  const possible = (type: GraphQLCompositeType): readonly GraphQLNamedType[] =>
    isAbstractType(type) ? schema.getPossibleTypes(type) : [type];
  const overlaps = (a: GraphQLCompositeType, b: GraphQLCompositeType): boolean => {
    const names = new Set(possible(a).map((t) => t.name));
    return possible(b).some((t) => names.has(t.name));
  };
  /** Composite types a fragment inside `parent` may be on. */
  const conditionsFor = (parent: GraphQLCompositeType): GraphQLCompositeType[] => {
    const candidates: GraphQLCompositeType[] = [parent];
    for (const t of possible(parent)) if (isObjectType(t) && t !== parent) candidates.push(t);
    for (const t of Object.values(schema.getTypeMap())) {
      if (
        (isInterfaceType(t) || isUnionType(t)) &&
        t !== parent &&
        !t.name.startsWith('__') &&
        overlaps(t, parent)
      )
        candidates.push(t);
    }
    return candidates;
  };

  const selectionSet = (type: GraphQLCompositeType, depth: number): string => {
    const selections: string[] = [];
    const fieldsSoFar: { key: string; head: string; field: GraphQLField<unknown, unknown> }[] = [];
    const width = 1 + nat(maxWidth - 1);
    for (let i = 0; i < width; i++) {
      const kind = nat(9);
      if (kind >= 8 && depth < maxDepth) {
        // An inline fragment, with or without a type condition.
        const on = chance(0.2) ? type : choose(conditionsFor(type));
        const condition = on === type && chance(0.5) ? '' : ` on ${on.name}`;
        selections.push(`...${condition}${directives()} { ${selectionSet(on, depth + 1)} }`);
      } else if (kind === 7 && depth < maxDepth) {
        // A named fragment: one used already (spread again elsewhere), or a new one.
        const usable = fragments.filter((f) => overlaps(f.on, type));
        let fragment: Fragment;
        if (usable.length > 0 && chance(0.6)) fragment = choose(usable);
        else {
          // Named before its body is drawn, added after: a body spreads only finished fragments,
          // so fragments never form a cycle.
          const on = choose(conditionsFor(type));
          const name = `F${fragmentNames++}`;
          fragment = { name, on, body: selectionSet(on, depth + 1) };
          fragments.push(fragment);
        }
        selections.push(`...${fragment.name}${directives()}`);
      } else if (kind === 6 && fieldsSoFar.length > 0) {
        // The same response key again: the same field and arguments, another selection.
        const earlier = choose(fieldsSoFar);
        const named = getNamedType(earlier.field.type);
        const sub = isCompositeType(named) ? ` { ${selectionSet(named, depth + 1)} }` : '';
        selections.push(`${earlier.head}${directives()}${sub}`);
      } else {
        const fields = isUnionType(type) ? [] : Object.values(type.getFields());
        const field = fields.length > 0 && chance(0.9) ? choose(fields) : undefined;
        if (!field) {
          let key = chance(0.2) ? alias() : '__typename';
          if (!fits(type, key, '__typename', 'String!')) key = `k${freshKeys++}`;
          setHead(type, key, { field: '__typename', head: key }, 'String!');
          selections.push(`${key === '__typename' ? '' : `${key}: `}__typename${directives()}`);
          continue;
        }
        const named = getNamedType(field.type);
        if (isCompositeType(named) && depth >= maxDepth) {
          selections.push('__typename');
          continue;
        }
        let key = chance(0.25) ? (chance(0.5) ? alias() : `${field.name}${nat(1)}`) : undefined;
        const returns = String(field.type);
        if (!fits(type, key ?? field.name, field.name, returns)) key = `k${freshKeys++}`;
        const earlier = headOf(type, key ?? field.name);
        let head = earlier?.head;
        if (!head) {
          const args = field.args
            .map((arg) => {
              const value = argumentValue(type.name, field.name, arg);
              return value === undefined ? undefined : `${arg.name}: ${value}`;
            })
            .filter((a) => a !== undefined);
          head = `${key ? `${key}: ` : ''}${field.name}${args.length ? `(${args.join(', ')})` : ''}`;
          setHead(type, key ?? field.name, { field: field.name, head }, returns);
        }
        fieldsSoFar.push({ key: key ?? field.name, head, field });
        const sub = isCompositeType(named) ? ` { ${selectionSet(named, depth + 1)} }` : '';
        selections.push(`${head}${directives()}${sub}`);
      }
    }
    return selections.join(' ');
  };

  const mutation = chance(0.12);
  const root = (mutation ? schema.getMutationType() : schema.getQueryType()) as GraphQLCompositeType;
  const body = selectionSet(root, 0);
  const named = chance(0.5);
  const operationName = named ? 'Generated' : undefined;
  const header = `${mutation ? 'mutation' : 'query'}${named ? ' Generated' : ''}${
    variableDefinitions.length ? `(${variableDefinitions.join(', ')})` : ''
  }`;
  // Only the fragments the operation reaches: an unused one fails validation.
  const used = new Set<string>();
  const reach = (text: string) => {
    for (const match of text.matchAll(/\.\.\.(F\d+)/g)) {
      const name = match[1] as string;
      if (used.has(name)) continue;
      used.add(name);
      reach(fragments.find((f) => f.name === name)?.body ?? '');
    }
  };
  reach(body);
  const definitions = fragments
    .filter((f) => used.has(f.name))
    .map((f) => `fragment ${f.name} on ${f.on.name} { ${f.body} }`);
  const query = [`${header} { ${body} }`, ...definitions].join(' ');
  return { query, variables, ...(operationName && chance(0.5) && { operationName }) };
}
