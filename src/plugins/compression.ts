import {
  type BrotliCompress,
  brotliCompressSync,
  constants,
  createBrotliCompress,
  createGzip,
  type Gzip,
  gzipSync,
} from 'node:zlib';
import type { Plugin } from 'graphql-yoga';
import { addVary } from '../shared/vary.ts';

/** A content coding the gateway answers with; `identity` is no coding at all. */
export type Coding = 'br' | 'gzip' | 'identity';

export interface CompressionOptions {
  /** COMPRESSION_MIN_BYTES: a single answer smaller than this is sent as it is. */
  minBytes: number;
  /** COMPRESSION_MAX_STREAMS: streams compressed at once; past it a new stream is sent as it is. */
  maxStreams: number;
}

/** Counts the compressors of open streams (native memory each), so a test can see every one freed. */
export interface CompressionTally {
  /** Compressors of streamed answers not yet ended or destroyed. */
  readonly openStreams: number;
}

/** The compression plugin, with the count of its open streams. */
export type Compression = Plugin & { tally: CompressionTally };

/** Speed over the last per cent, and gzip at zlib's default level: docs/delivery.md, Levels. */
const BROTLI_QUALITY = 4;
/** Smaller windows for a stream's compressor, which lives as long as the stream (docs/delivery.md). */
const STREAM_BROTLI_LGWIN = 18;
const STREAM_GZIP = { windowBits: 13, memLevel: 7 } as const;
/** A stream's compressed output is handed on at least once per this much input (see compressStream). */
const HAND_ON_BYTES = 64 * 1024;

/** Bodies worth compressing: GraphQL answers (single and streamed) and the metrics text. */
const SINGLE_TYPES = /^(application\/(json|graphql-response\+json)|text\/plain)\b/i;
const STREAM_TYPES = /^(multipart\/mixed|text\/event-stream)\b/i;

/**
 * Compresses answers as Accept-Encoding allows (docs/delivery.md#compression): single answers of
 * at least `minBytes` in brotli or gzip, streams in gzip only, at most `maxStreams` at once, flushed
 * part by part; `Vary: Accept-Encoding` on every compressible type. Never an answer with a
 * Content-Encoding, HTML, a 204/304, a HEAD. Runs after useConditionalGet, before the rest.
 */
export function useCompression(options: CompressionOptions): Compression {
  let openStreams = 0;
  const tally: CompressionTally = {
    get openStreams() {
      return openStreams;
    },
  };
  return {
    tally,
    async onResponse({ request, response, setResponse, fetchAPI }) {
      if (request.method === 'HEAD' || response.status === 204 || response.status === 304) return;
      // Yoga marks SSE answers `Content-Encoding: none` (asking proxies not to buffer them): not a coding.
      const current = response.headers.get('content-encoding');
      if (current !== null && current !== 'none') return;
      const type = response.headers.get('content-type') ?? '';
      const stream = STREAM_TYPES.test(type);
      if (!stream && !SINGLE_TYPES.test(type)) return;
      addVary(response.headers, 'Accept-Encoding');
      const accepted = request.headers.get('accept-encoding');
      if (stream) {
        if (response.body === null || openStreams >= options.maxStreams) return;
        const coding = negotiateCoding(accepted, ['gzip']);
        if (coding !== 'gzip') return;
        const headers = copyHeaders(response.headers, fetchAPI.Headers);
        headers.set('content-encoding', coding);
        headers.delete('content-length');
        openStreams++;
        const body = compressStream(response.body, coding, request.signal, fetchAPI.ReadableStream, () => {
          openStreams--;
        });
        setResponse(
          new fetchAPI.Response(body, { status: response.status, statusText: response.statusText, headers }),
        );
        return;
      }
      const coding = negotiateCoding(accepted);
      if (coding === 'identity') return;
      // Yoga states the length of a single answer: a small one is not even read here.
      const length = Number(response.headers.get('content-length') ?? Number.NaN);
      if (length < options.minBytes) return;
      // Yoga's body is a string: its text is had without a copy, and zlib takes it as it is.
      const text = await response.text();
      if (Buffer.byteLength(text) < options.minBytes) {
        if (response.bodyUsed) {
          setResponse(
            new fetchAPI.Response(text, {
              status: response.status,
              statusText: response.statusText,
              headers: response.headers,
            }),
          );
        }
        return;
      }
      const compressed = compressOnce(text, coding);
      const headers = copyHeaders(response.headers, fetchAPI.Headers);
      headers.set('content-encoding', coding);
      headers.set('content-length', String(compressed.byteLength));
      setResponse(
        new fetchAPI.Response(compressed, {
          status: response.status,
          statusText: response.statusText,
          headers,
        }),
      );
    },
  };
}

/** A copy of `headers` by their entries: the ponyfill's copy of a Headers misses mixed-case names. */
function copyHeaders(headers: Headers, HeadersClass: typeof Headers): Headers {
  const copy = new HeadersClass();
  headers.forEach((value, name) => {
    copy.append(name, value);
  });
  return copy;
}

export function compressOnce(body: string, coding: 'br' | 'gzip'): Uint8Array<ArrayBuffer> {
  const compressed =
    coding === 'gzip'
      ? gzipSync(body)
      : brotliCompressSync(body, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
            [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
            [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
          },
        });
  return new Uint8Array(compressed.buffer as ArrayBuffer, compressed.byteOffset, compressed.byteLength);
}

/** One Accept-Encoding entry: a coding (lower case) and its weight. */
interface Weighted {
  coding: string;
  q: number;
}

function parseAcceptEncoding(header: string): Weighted[] {
  const entries: Weighted[] = [];
  for (const item of header.split(',')) {
    const [name, ...params] = item.split(';');
    const coding = name?.trim().toLowerCase();
    if (!coding) continue;
    let q = 1;
    for (const param of params) {
      const [key, value] = param.split('=');
      if (key?.trim().toLowerCase() !== 'q') continue;
      const weight = Number(value?.trim());
      // RFC 9110: a weight is 0 to 1 with up to three decimals; a malformed one drops the entry.
      q = /^\s*(0(\.\d{0,3})?|1(\.0{0,3})?)\s*$/.test(value ?? '') ? weight : Number.NaN;
    }
    if (!Number.isNaN(q)) entries.push({ coding: coding === 'x-gzip' ? 'gzip' : coding, q });
  }
  return entries;
}

/**
 * The coding to answer with (RFC 9110, 12.5.3): the acceptable one (weight above 0, named or by
 * `*`) of highest weight among `offered`, the earlier at equal weight; `identity` when the header
 * is absent or empty, none offered is acceptable, or identity is named with a higher weight. Never
 * a 406, even when identity is refused too (docs/delivery.md, Negotiation).
 */
export function negotiateCoding(
  header: string | null,
  offered: readonly ('br' | 'gzip')[] = ['br', 'gzip'],
): Coding {
  if (!header) return 'identity';
  const entries = parseAcceptEncoding(header);
  const weightOf = (coding: string): number =>
    entries.find((entry) => entry.coding === coding)?.q ??
    entries.find((entry) => entry.coding === '*')?.q ??
    0;
  let best: Coding = 'identity';
  let bestWeight = 0;
  for (const coding of offered) {
    const weight = weightOf(coding);
    if (weight > bestWeight) {
      best = coding;
      bestWeight = weight;
    }
  }
  const identity = entries.find((entry) => entry.coding === 'identity')?.q;
  return identity !== undefined && identity > bestWeight ? 'identity' : best;
}

/**
 * `source` compressed as a stream: each pull reads it until nothing more is at hand (or
 * HAND_ON_BYTES), then flushes, so what was produced decodes at once. The compressor is ended with
 * the source, destroyed on cancel or abort; `freed` is called once, either way.
 */
export function compressStream(
  source: ReadableStream<Uint8Array | string>,
  coding: 'br' | 'gzip',
  signal: AbortSignal,
  ReadableStreamClass: typeof ReadableStream,
  freed: () => void,
): ReadableStream<Uint8Array> {
  const compressor: BrotliCompress | Gzip =
    coding === 'br'
      ? createBrotliCompress({
          params: {
            [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
            [constants.BROTLI_PARAM_LGWIN]: STREAM_BROTLI_LGWIN,
            [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
          },
        })
      : createGzip(STREAM_GZIP);
  const flushKind = coding === 'br' ? constants.BROTLI_OPERATION_FLUSH : constants.Z_SYNC_FLUSH;
  const reader = source.getReader();
  let next: Promise<ReadableStreamReadResult<Uint8Array | string>> | undefined;
  let finished = false;
  /** Input bytes written to the compressor since output was last handed on. */
  let written = 0;
  compressor.once('close', freed);
  const stop = (reason: unknown) => {
    if (finished) return;
    finished = true;
    compressor.destroy();
    reader.cancel(reason).catch(() => {});
  };
  const onAbort = () => stop(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  compressor.once('close', () => signal.removeEventListener('abort', onAbort));
  /** Output not yet handed on: each pull hands on what its flush produced, as one chunk. */
  let produced: Buffer[] = [];
  compressor.on('data', (chunk: Buffer) => produced.push(chunk));
  const handOn = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    if (produced.length === 0) return false;
    const chunk = produced.length === 1 ? (produced[0] as Buffer) : Buffer.concat(produced);
    produced = [];
    controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    return true;
  };
  return new ReadableStreamClass<Uint8Array>({
    start(controller) {
      if (signal.aborted) onAbort();
      compressor.once('error', (error) => controller.error(error));
    },
    async pull(controller) {
      try {
        for (;;) {
          const read = await (next ?? reader.read());
          next = undefined;
          if (finished) return;
          if (read.done) {
            finished = true;
            // The 'end' event follows the last 'data'.
            const ended = new Promise<void>((resolve) => compressor.once('end', resolve));
            compressor.end();
            await ended;
            handOn(controller);
            controller.close();
            return;
          }
          const chunk = typeof read.value === 'string' ? Buffer.from(read.value) : read.value;
          compressor.write(chunk);
          written += chunk.byteLength;
          next = reader.read();
          // Bounded, so a source that always has more at hand waits for a client that reads slowly.
          if (written >= HAND_ON_BYTES || (await nothingAtHand(next))) {
            written = 0;
            await new Promise<void>((resolve) => compressor.flush(flushKind, () => resolve()));
            // A pull hands on at least one chunk: some streams are not pulled again otherwise.
            if (handOn(controller)) return;
          }
        }
      } catch (error) {
        stop(error);
        controller.error(error);
      }
    },
    cancel(reason) {
      stop(reason);
    },
  });
}

/** Whether `read` is still pending once the event loop has run what is already queued. */
function nothingAtHand(read: Promise<unknown>): Promise<boolean> {
  return Promise.race([
    read.then(
      () => false,
      () => false,
    ),
    new Promise<boolean>((resolve) => setImmediate(resolve, true)),
  ]);
}
