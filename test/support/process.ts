import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

/**
 * Starts one of the project's entry points as its own process (as `npm start` would), waits for
 * the line that announces its URL, and returns it. Output is kept for assertions.
 */
export async function startProcess(
  entry: string,
  args: string[],
  env: Record<string, string>,
  /**
   * Where the URL shows in its output (the first group), or how to learn that it is ready (for a
   * process that prints nothing, such as a production gateway logging at warn).
   */
  urlPattern: RegExp | (() => Promise<string>),
  /** The checkout to run it in; default: this one. */
  cwd = new URL('../..', import.meta.url).pathname,
): Promise<{ child: ChildProcess; url: string; output: () => string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [entry, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = urlPattern instanceof RegExp ? urlPattern.exec(output) : null;
      if (match?.[1]) resolve(match[1]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    if (!(urlPattern instanceof RegExp)) urlPattern().then(resolve, reject);
    exited.then((code) => reject(new Error(`${entry} exited with ${code} before it was ready:\n${output}`)));
  });
  return { child, url, output: () => output, exited };
}

/**
 * A loopback port free right now, for a process that must be told its port before it starts
 * (redis-server, haproxy, a container on the host's network, a restart on the same port).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
