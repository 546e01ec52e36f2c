import { randomUUID } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';

const ids = new WeakMap<Request, string>();
export const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: the caller's X-Request-Id when it is safe to log, otherwise a new UUID. */
export function requestIdOf(request: Request): string {
  let id = ids.get(request);
  if (!id) {
    const given = request.headers.get('x-request-id');
    id = given && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
    ids.set(request, id);
  }
  return id;
}

/** Gives every request an id, echoed in the X-Request-Id response header and used in logs. */
export function useRequestId(): Plugin {
  return {
    onResponse({ request, response }) {
      response.headers.set('x-request-id', requestIdOf(request));
    },
  };
}
