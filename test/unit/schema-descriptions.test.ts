import {
  type GraphQLNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isIntrospectionType,
  isObjectType,
  isScalarType,
  isSpecifiedScalarType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.ts';

/**
 * GraphiQL's docs are the manual a client developer reads first: every type, field, argument,
 * enum value and input field of the schema says what it is. A new one without a description
 * fails here, with its coordinate.
 */
/** A description GraphiQL shows in its docs pane: longer than this, the detail belongs in docs/. */
const MAX_DESCRIPTION = 320;

function descriptions(): [coordinate: string, description: string | null | undefined][] {
  const all: [string, string | null | undefined][] = [];
  const check = (coordinate: string, description: string | null | undefined) => {
    all.push([coordinate, description]);
  };
  for (const type of Object.values(schema.getTypeMap()) as GraphQLNamedType[]) {
    if (isIntrospectionType(type) || (isScalarType(type) && isSpecifiedScalarType(type))) continue;
    check(type.name, type.description);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        check(`${type.name}.${field.name}`, field.description);
        for (const arg of field.args) check(`${type.name}.${field.name}(${arg.name}:)`, arg.description);
      }
    } else if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields()))
        check(`${type.name}.${field.name}`, field.description);
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) check(`${type.name}.${value.name}`, value.description);
    }
  }
  return all;
}

describe('the schema documents itself', () => {
  it('describes every type, field, argument, enum value and input field', () => {
    const undescribed = descriptions().filter(([, d]) => !d || d.trim().length < 3);
    expect(undescribed.map(([coordinate]) => coordinate)).toEqual([]);
  });

  it(`keeps each description within ${MAX_DESCRIPTION} characters, a paragraph of the docs pane`, () => {
    const long = descriptions().filter(([, d]) => (d?.length ?? 0) > MAX_DESCRIPTION);
    expect(long.map(([coordinate, d]) => `${coordinate}: ${d?.length}`)).toEqual([]);
  });
});
