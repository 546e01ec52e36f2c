import { GraphQLError, Kind } from 'graphql';
import { DateTimeResolver } from 'graphql-scalars';
import { quoted } from '../errors/echoes.ts';
import { builder } from './builder.ts';
import { INPUT_LIMITS } from './input-limits.ts';

/** A signed plain decimal: digits, optionally a dot and more digits. No exponent, no float. */
const DECIMAL = /^-?(?:0|[1-9]\d*)(?:\.\d+)?$/;

function parseDecimal(value: unknown): string {
  // By length first: the pattern never runs on a long string.
  if (typeof value !== 'string' || value.length > INPUT_LIMITS.decimal || !DECIMAL.test(value)) {
    throw new GraphQLError(
      `Decimal must be a string of digits with an optional fraction, e.g. "10.25", at most ${INPUT_LIMITS.decimal} characters; received ${quoted(value)}`,
      { extensions: { code: 'BAD_USER_INPUT' } },
    );
  }
  return value;
}

builder.scalarType('Decimal', {
  description:
    'An exact decimal number, sent as a string ("10.2500000000000000") so no digit is lost to floating point. ' +
    "Amounts keep the REST API's digits verbatim: 16 fractional digits on resources, 18 on transaction legs.",
  serialize: (value) => value,
  parseValue: parseDecimal,
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) {
      throw new GraphQLError('Decimal literals must be strings, e.g. "10.25", never numbers.', {
        extensions: { code: 'BAD_USER_INPUT' },
      });
    }
    return parseDecimal(ast.value);
  },
});

builder.addScalarType('DateTime', DateTimeResolver);
