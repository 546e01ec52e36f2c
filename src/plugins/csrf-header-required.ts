import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import type { Plugin } from 'graphql-yoga';
import { isBearer } from '../context.ts';
import type { ErrorCode } from '../errors/error-codes.ts';

/**
 * Yoga's CSRF prevention (a browser's "simple" request must carry one of `requestHeaders`), refused
 * with CSRF_HEADER_REQUIRED, HTTP 403. A request with a Bearer key passes as it is: a browser sends
 * one only after a preflight, and the gateway honours no cookies (docs/production.md, Limits and
 * browser safety).
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
        (error as { message: string }).message =
          'Send Authorization: Bearer <API key>. A request without a key that a browser could send cross-site (a GET, a form or text/plain POST) must also carry an x-graphql-csrf header.';
        throw error;
      }
    },
  };
}
