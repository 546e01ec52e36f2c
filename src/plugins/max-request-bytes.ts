import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ERROR_CODES, type ErrorCode } from '../errors/error-codes.ts';
import { refusal } from './refusal.ts';

const TOO_LARGE = 'REQUEST_TOO_LARGE' satisfies ErrorCode;

/**
 * Refuses bodies over `maxBytes` with 413 REQUEST_TOO_LARGE before anything runs: by Content-Length
 * (Node then delivers exactly that many bytes), or counted while reading a chunked one. In place of
 * Yoga's limit, which counts every body (docs/benchmark.md#figures-behind-design-choices).
 */
export function useMaxRequestBytes(maxBytes: number): Plugin {
  const message = (detail: string) => `Request bodies are limited to ${maxBytes} bytes; ${detail}.`;
  return {
    onRequest({ request, endResponse }) {
      const header = request.headers.get('content-length');
      if (header === null || Number(header) <= maxBytes) return;
      const error = { message: message(`received ${header}`), extensions: { code: TOO_LARGE } };
      endResponse(refusal(request, ERROR_CODES[TOO_LARGE].status, error, { connection: 'close' }));
    },
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      if (request.headers.has('content-length') || !request.body || !requestParser) return;
      const parse = requestParser;
      setRequestParser(async (chunked) => {
        const body = await readAtMost(
          chunked,
          maxBytes,
          () =>
            new GraphQLError(message('the chunked body went past it'), {
              extensions: {
                code: TOO_LARGE,
                http: { status: ERROR_CODES[TOO_LARGE].status, headers: { connection: 'close' } },
              },
            }),
        );
        return parse(
          new fetchAPI.Request(chunked.url, {
            method: chunked.method,
            headers: chunked.headers,
            body,
            signal: chunked.signal,
          }),
        );
      });
    },
  };
}

/** The whole body of a request without Content-Length, or `tooLarge()` thrown past `maxBytes`. */
async function readAtMost(
  request: Request,
  maxBytes: number,
  tooLarge: () => Error,
): Promise<Uint8Array<ArrayBuffer>> {
  const reader = (request.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > maxBytes) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  const body = new Uint8Array(new ArrayBuffer(length));
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
