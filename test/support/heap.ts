import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// Tests that measure what a structure keeps need the collector on demand; vitest's workers are
// not started with --expose-gc.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The heap in use once garbage is collected (twice: weak references and finalizers go in a second pass). */
export function heapUsed(): number {
  gc();
  gc();
  return getHeapStatistics().used_heap_size;
}
