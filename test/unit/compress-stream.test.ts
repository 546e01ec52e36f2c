import { gunzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { compressStream } from '../../src/plugins/compression.ts';

// A stream's compressor reads its source only as fast as the client reads: a source that always
// has more at hand (a long @stream list, resolved at once) is not compressed whole into memory
// while the client reads nothing.
it('reads a source that always has more at hand only as the client reads, and decodes whole', async () => {
  const CHUNKS = 200;
  const chunk = (i: number) =>
    `{"incremental":[{"items":[${i}],"path":["deposits",${i}]}],"hasNext":true}\r\n`.padEnd(16 * 1024, ' ');
  let pulled = 0;
  const source = new ReadableStream<string>(
    {
      pull(controller) {
        if (pulled === CHUNKS) return controller.close();
        controller.enqueue(chunk(pulled++));
      },
    },
    { highWaterMark: 0 },
  );
  let freed = 0;
  const compressed = compressStream(source, 'gzip', new AbortController().signal, ReadableStream, () => {
    freed++;
  });
  const reader = compressed.getReader();
  const first = await reader.read();
  expect(first.done).toBe(false);
  for (let i = 0; i < 50; i++) await new Promise(setImmediate);
  // The hand-on the client read and the one queued behind it (64 KiB of input, 4 chunks, each), and
  // a read ahead: not all 200.
  expect(pulled).toBeLessThanOrEqual(9);
  const received = [Buffer.from(first.value as Uint8Array)];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received.push(Buffer.from(value));
  }
  expect(pulled).toBe(CHUNKS);
  const text = gunzipSync(Buffer.concat(received)).toString('utf8');
  expect(text).toBe(Array.from({ length: CHUNKS }, (_, i) => chunk(i)).join(''));
  for (let i = 0; i < 10 && freed === 0; i++) await new Promise(setImmediate);
  expect(freed).toBe(1);
});
