import { type ChildProcess, spawn } from 'node:child_process';

/**
 * Starts one of the project's entry points as its own process (as `npm start` would), waits for
 * the line that announces its URL, and returns it. Output is kept for assertions.
 */
export async function startProcess(
  entry: string,
  args: string[],
  env: Record<string, string>,
  urlPattern: RegExp,
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
      const match = urlPattern.exec(output);
      if (match?.[1]) resolve(match[1]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    exited.then((code) => reject(new Error(`${entry} exited with ${code} before it was ready:\n${output}`)));
  });
  return { child, url, output: () => output, exited };
}
