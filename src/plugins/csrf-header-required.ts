import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import type { Plugin } from 'graphql-yoga';
import { isBearer } from '../context.ts';
import type { ErrorCode } from '../errors/error-codes.ts';

/**
 * Yoga's CSRF prevention (browsers' "simple" requests must carry one of `requestHeaders`), with a
 * code on its refusal: CSRF_HEADER_REQUIRED, HTTP 403.
 *
 * A request with a Bearer key passes as it is. The gateway honours no cookies, so a cross-site
 * page has no ambient credential to ride on: it can only send a key it already holds, and
 * `Authorization` is not a CORS-safelisted header, so a browser sends it only after a preflight
 * (never on a simple request; the credentials a browser adds by itself are Basic or Digest, which
 * are not Bearer). That is what GraphiQL's own subscription transport (a GET with
 * `accept: text/event-stream`), urql's and Apollo's GET queries send. A simple request without a
 * key still needs the header, so a page cannot make the gateway parse or answer anything for it.
 */
export function useCSRFHeaderRequired(requestHeaders: string[]): Plugin {
  const csrf = useCSRFPrevention({ requestHeaders });
  return {
    onRequestParse(payload) {
      const authorization = payload.request.headers.get('authorization');
      if (authorization && isBearer(authorization)) return;
      try {
        return csrf.onRequestParse?.(payload);
      } catch (error) {
        const extensions = (error as { extensions?: Record<string, unknown> }).extensions;
        if (extensions) extensions.code = 'CSRF_HEADER_REQUIRED' satisfies ErrorCode;
        // Most who meet this forgot the key: say so first.
        (error as { message: string }).message =
          'Send Authorization: Bearer <API key>. A request without a key that a browser could send cross-site (a GET, a form or text/plain POST) must also carry an x-graphql-csrf header.';
        throw error;
      }
    },
  };
}
