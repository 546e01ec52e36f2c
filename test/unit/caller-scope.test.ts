import { describe, expect, it } from 'vitest';
import { CallerScopes } from '../../src/upstream/caller-scope.ts';

describe('caller scopes', () => {
  it('one scope per key, kept; a new scope secret gives every key a new scope at once', () => {
    const scopes = new CallerScopes(Buffer.alloc(32, 1));
    const a = scopes.scopeOf('Bearer key-a');
    expect(scopes.scopeOf('Bearer key-a')).toBe(a);
    expect(scopes.scopeOf('Bearer key-b')).not.toBe(a);
    // The same secret in another process gives the same scope (the fleet shares it).
    const other = new CallerScopes(Buffer.alloc(32, 1));
    expect(other.scopeOf('Bearer key-a')).toBe(a);
    scopes.useSecret(Buffer.alloc(32, 2));
    const renewed = scopes.scopeOf('Bearer key-a');
    expect(renewed).not.toBe(a);
    expect(renewed).toBe(new CallerScopes(Buffer.alloc(32, 2)).scopeOf('Bearer key-a'));
  });
});
