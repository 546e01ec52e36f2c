import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { DestinationStream } from 'pino';
import { inject } from 'vitest';

/**
 * Every log line any gateway writes during `npm test` is appended to a file in the directory the
 * global setup provides, and every key a test sends is recorded beside them; the global teardown
 * searches all of it for keys (test/global-setup.ts).
 */
const dir = inject('suiteLogDir');
const file = (kind: string) => join(dir, `${kind}-${process.pid}-${threadId}.log`);

export function suiteLogDestination(alsoTo?: string[]): DestinationStream {
  const logFile = file('logs');
  return {
    write(line: string) {
      alsoTo?.push(line);
      appendFileSync(logFile, line.endsWith('\n') ? line : `${line}\n`);
    },
  };
}

/** Output of a started process (e2e), kept with the rest of the suite's logs. */
export function captureProcessOutput(name: string, output: string): void {
  appendFileSync(file('process'), `# ${name}\n${output}\n`);
}

export function recordSuiteKey(key: string): void {
  appendFileSync(file('keys'), `${key}\n`);
}
