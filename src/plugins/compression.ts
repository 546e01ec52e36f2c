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

/** The settings of compression (COMPRESSION, COMPRESSION_MIN_BYTES in config.ts). */
export interface CompressionOptions {
  /** A single answer smaller than this is sent as it is: below ~1 KiB the saving is a few bytes. */
  minBytes: number;
  /** Streams compressed at once; past it a new stream is sent as it is (each holds a compressor). */
  maxStreams: number;
}

/**
 * Counts the compressors of open streams, so that a test (and an operator, through a debugger)
 * can see that every one is freed: each holds a zlib or brotli context in native memory.
 */
export interface CompressionTally {
  /** Compressors of streamed answers not yet ended or destroyed. */
  readonly openStreams: number;
}

/** The compression plugin, with the count of its open streams. */
export type Compression = Plugin & { tally: CompressionTally };

// Dynamic content is compressed once per answer, so speed matters more than the last per cent:
// brotli at quality 4 and gzip at zlib's default level (6); docs/benchmark.md has the figures.
const BROTLI_QUALITY = 4;
/**
 * A stream's compressor lives as long as the stream (a subscription: hours), so its memory is
 * bounded: brotli's window is 256 KiB (lgwin 18) instead of 4 MiB, and gzip's window 8 KiB
 * (windowBits 13) with memLevel 7, instead of 32 KiB and 8. Events are a few KiB, so a
 * smaller window loses little (docs/delivery.md has the memory per open stream).
 */
const STREAM_BROTLI_LGWIN = 18;
const STREAM_GZIP = { windowBits: 13, memLevel: 7 } as const;
/** A stream's compressed output is handed on at least once per this much input (see compressStream). */
const HAND_ON_BYTES = 64 * 1024;

/** Bodies worth compressing: GraphQL answers (single and streamed) and the metrics text. */
const SINGLE_TYPES = /^(application\/(json|graphql-response\+json)|text\/plain)\b/i;
const STREAM_TYPES = /^(multipart\/mixed|text\/event-stream)\b/i;

/**
 * Compresses answers for clients that accept it, as their Accept-Encoding allows: single answers
 * in brotli (preferred at equal weight) or gzip, streams in gzip only and at most `maxStreams` at
 * once (past it a stream goes as it is); `Vary: Accept-Encoding` on every answer of
 * a compressible type, whatever was chosen, so no cache hands a compressed answer to a client
 * that did not ask for it.
 *
 * Single answers below `minBytes` are sent as they are. Streams (@defer/@stream over
 * multipart/mixed, SSE) are compressed with a flush each time the stream has nothing more at
 * hand, so every part and event reaches the client when it is produced.
 *
 * Never compressed: an answer that already has a Content-Encoding (the GraphiQL page compresses
 * itself), HTML, a 204/304 or any answer without a body, a HEAD.
 *
 * Its onResponse must run before the plugins that look at the answer as sent (it is the first
 * plugin in yoga.ts, after useConditionalGet, whose 304s it leaves alone).
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
        // A stream holds its compressor while it is open (a subscription: hours), so streams are
        // gzip only (brotli's context costs about four times as much) and at most maxStreams at once.
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

/**
 * A copy of `headers` by their entries: the Headers ponyfill copies another Headers' initial
 * object as it is, and `get` on the copy then misses names that were not written in lower case.
 */
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
 * The coding to answer with, given the request's Accept-Encoding (RFC 9110, 12.5.3): the
 * acceptable one (weight above 0, named or through `*`) of highest weight among `offered`, the
 * earlier in `offered` at equal weight (brotli, then gzip, for single answers; gzip alone for
 * streams, whose compressor lives as long as they do). `identity` when the header is absent or
 * empty, when none offered is acceptable, or when identity is named with a higher weight. When
 * nothing is acceptable, not even identity (`identity;q=0`, `*;q=0`), the answer is still sent
 * uncompressed rather than refused with a 406: the RFC allows either, and a client that cannot
 * read JSON has no use for an error in JSON either.
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
  // Identity is preferred only when the client names it, with a higher weight.
  const identity = entries.find((entry) => entry.coding === 'identity')?.q;
  return identity !== undefined && identity > bestWeight ? 'identity' : best;
}

/**
 * `source` compressed as a stream. Each pull reads the source until it has nothing more at hand
 * (the parts of one payload come as several chunks at once), then flushes (Z_SYNC_FLUSH,
 * BROTLI_OPERATION_FLUSH), so what was produced is decodable at once. The compressor is ended with
 * the source and destroyed when the reader cancels (a client that went away) or the request is
 * aborted; `freed` is called once, either way.
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
          // Hand on at least every HAND_ON_BYTES of input, so a source that always has more at
          // hand (a long @stream) is not compressed whole before the client reads any of it: the
          // next pull, and so the next read of the source, waits for the client.
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
