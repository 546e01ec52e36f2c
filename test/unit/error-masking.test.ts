import { type FieldNode, GraphQLError, Kind, type OperationDefinitionNode, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { maskUncodedError } from '../../src/plugins/error-contract.ts';

/** Yoga's masking with a code on the executor's own errors (src/plugins/error-contract.ts). */
describe('maskUncodedError', () => {
  const document = parse('query($v: Boolean = false) { node(id: "x") { id @skip(if: $v) } }');
  const field = (document.definitions[0] as OperationDefinitionNode).selectionSet.selections[0] as FieldNode;
  const variable = field.selectionSet?.selections[0] as FieldNode;
  const condition = variable.directives?.[0]?.arguments?.[0]?.value;

  it('a field error the executor raised about a value the client sent: BAD_USER_INPUT, message kept', () => {
    const error = new GraphQLError('Argument "if" of non-null type "Boolean!" must not be null.', {
      nodes: condition,
      path: ['node', 'id'],
    });
    expect(condition?.kind).toBe(Kind.VARIABLE);
    const masked = maskUncodedError(error, 'Unexpected error.');
    expect(masked).toBe(error);
    expect((masked as GraphQLError).extensions).toEqual({ code: 'BAD_USER_INPUT' });
  });

  it('any other field error of the executor without a code: masked as INTERNAL_SERVER_ERROR', () => {
    const error = new GraphQLError('Abstract type "Node" must resolve to an Object type at runtime', {
      nodes: field,
      path: ['node'],
    });
    const masked = maskUncodedError(error, 'Unexpected error.') as GraphQLError;
    expect(masked.message).toBe('Unexpected error.');
    expect(masked.extensions.code).toBe('INTERNAL_SERVER_ERROR');
    expect(masked.path).toEqual(['node']);
    expect(masked.locations).toEqual([{ line: 1, column: 30 }]);
  });

  it('leaves coded errors, and masks non-GraphQL errors, as Yoga does', () => {
    const coded = new GraphQLError('No such wallet', { path: ['wallet'], extensions: { code: 'NOT_FOUND' } });
    expect(maskUncodedError(coded, 'Unexpected error.')).toBe(coded);
    const thrown = maskUncodedError(new Error('boom'), 'Unexpected error.') as GraphQLError;
    expect(thrown.message).toBe('Unexpected error.');
    expect(thrown.extensions.code).toBe('INTERNAL_SERVER_ERROR');
  });
});
