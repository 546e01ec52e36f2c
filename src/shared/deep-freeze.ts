/**
 * A parsed REST answer as resolvers may hand it on, in place, in one walk:
 *
 * - frozen all the way down: coalescing and the micro-cache hand the same objects to several
 *   requests, so none may change them (one did: a feed reversed a page in place);
 * - without any object's `then` member: the usual executor takes an object whose `then` is not
 *   null for a promise, so one REST item with such a member (none is documented; an API may add
 *   one) failed its whole list with INTERNAL_SERVER_ERROR, while compiled execution answered it.
 *   No field of the schema reads a `then`.
 */
export function settledAnswer<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  if (!Array.isArray(value) && Object.hasOwn(value, 'then')) delete (value as { then?: unknown }).then;
  Object.freeze(value);
  for (const child of Object.values(value)) settledAnswer(child);
  return value;
}

/** `value` with every object and array in it frozen, in place. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
  return value;
}
