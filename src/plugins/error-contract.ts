import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { createGraphQLError, type Plugin } from 'graphql-yoga';

/**
 * One error contract: every error a client sees has an `extensions.code` from the README's table,
 * and no error echoes what the client sent. Yoga and its plugins leave three gaps, closed here:
 *
 * - variables that are missing or of the wrong type fail before execution without a code: they
 *   get BAD_USER_INPUT (HTTP 400 as before);
 * - Yoga's JSON body parser copies the parser's message, with a piece of the body, into
 *   `extensions.originalError`: removed, in every environment;
 * - a POST whose Content-Type no parser takes answers an empty 415: it gets an error body with
 *   UNSUPPORTED_MEDIA_TYPE.
 */
export function useErrorContract(): Plugin {
  return {
    onRequestParse({ request, requestParser }) {
      if (requestParser || request.method !== 'POST') return;
      throw createGraphQLError(
        'Send the request as application/json (or application/graphql-response+json for the answer).',
        { extensions: { code: 'UNSUPPORTED_MEDIA_TYPE', http: { status: 415 } } },
      );
    },
    onExecute() {
      return {
        onExecuteDone({ result }) {
          // A result without `data` is a request error: here, the variables could not be coerced.
          if (Symbol.asyncIterator in result || 'data' in result || !result.errors) return;
          for (const error of result.errors) {
            const extensions = error.extensions as Record<string, unknown>;
            extensions.code ??= 'BAD_USER_INPUT';
          }
        },
      };
    },
    onResultProcess({ result }) {
      for (const one of Array.isArray(result) ? result : [result]) {
        if (!('errors' in one) || !one.errors) continue;
        for (const error of one.errors) {
          const extensions = error.extensions as Record<string, unknown> | undefined;
          if (!extensions || !('originalError' in extensions)) continue;
          delete extensions.originalError;
          // Yoga answers such an error 400 under application/json only while originalError is
          // there; without it, the status must be stated for every media type (GraphQL over HTTP:
          // a body that is not JSON SHOULD be 400).
          const http = extensions.http as { status?: number; spec?: boolean } | undefined;
          if (http?.spec) extensions.http = { ...http, spec: false };
        }
      }
    },
  };
}

/**
 * Yoga's CSRF prevention (browsers' "simple" requests must carry one of `requestHeaders`), with a
 * code on its refusal: CSRF_HEADER_REQUIRED, HTTP 403.
 */
export function useCSRFHeaderRequired(requestHeaders: string[]): Plugin {
  const csrf = useCSRFPrevention({ requestHeaders });
  return {
    onRequestParse(payload) {
      try {
        return csrf.onRequestParse?.(payload);
      } catch (error) {
        const extensions = (error as { extensions?: Record<string, unknown> }).extensions;
        if (extensions) extensions.code = 'CSRF_HEADER_REQUIRED';
        throw error;
      }
    },
  };
}
