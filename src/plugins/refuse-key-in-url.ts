import type { Plugin } from 'graphql-yoga';
import { ERROR_CODES } from '../errors/error-codes.ts';
import { GatewayError } from '../errors/errors.ts';
import { refusal } from './refusal.ts';

/** Query parameter names that look like someone put a credential in the URL. */
const CREDENTIAL_PARAMS = new Set([
  'api_key',
  'apikey',
  'api-key',
  'key',
  'token',
  'access_token',
  'accesstoken',
  'auth',
  'authorization',
  'bearer',
]);

/**
 * Refuses a request that carries an API key in its URL (the REST spec forbids keys in URLs; URLs
 * end up in proxy logs and browser history) before anything reads or logs the URL.
 */
export function useRefuseKeyInURL(): Plugin {
  return {
    onRequest({ request, url, endResponse }) {
      let refused = false;
      for (const [name, value] of url.searchParams) {
        if (CREDENTIAL_PARAMS.has(name.toLowerCase()) || /^bearer\s/i.test(value)) refused = true;
      }
      if (!refused) return;
      const error = new GatewayError(
        'API_KEY_IN_URL',
        'API keys must not be sent in URLs. Send Authorization: Bearer <API key> as a header, and revoke a key that was sent in a URL.',
      );
      endResponse(
        refusal(request, ERROR_CODES[error.code].status, error.toJSON() as Parameters<typeof refusal>[2]),
      );
    },
  };
}
