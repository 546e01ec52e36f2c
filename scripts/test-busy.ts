/**
 * `npm run test:busy [-- --runs 3 --hogs 2 --quiet-runs 0 --keep]`: the README's test command
 * (`npm ci && npm test`) on fresh clones of HEAD, one after another, each beside `--hogs` busy
 * processes (a CPU hog: each spins one core as fast as it can), so that a test whose verdict
 * depends on how fast or idle the machine is fails here rather than on someone else's machine.
 * `--quiet-runs N` first runs N clones with no hog (the same command as CI). Each run's output
 * goes to a log file in the run's directory; the summary names each verdict, its time, and the
 * failed tests. Exits 1 when any run failed. The hogs are started and stopped by this script
 * (also on Ctrl+C), so nothing is left spinning.
 *
 * Committed work only: a clone of HEAD is what CI tests.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    hogs: { type: 'string', default: '2' },
    'quiet-runs': { type: 'string', default: '0' },
    keep: { type: 'boolean', default: false },
  },
});
const busyRuns = Number(values.runs);
const hogCount = Number(values.hogs);
const quietRuns = Number(values['quiet-runs']);
for (const [name, value] of [
  ['--runs', busyRuns],
  ['--hogs', hogCount],
  ['--quiet-runs', quietRuns],
] as const) {
  if (!Number.isInteger(value) || value < 0) {
    console.error(`${name} must be a whole number ≥ 0, got ${JSON.stringify(value)}`);
    process.exit(2);
  }
}

const root = new URL('..', import.meta.url).pathname;
const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
const hogs: ChildProcess[] = [];

function startHogs(count: number): void {
  for (let i = 0; i < count; i++) {
    // The machine's own node: a loop that never yields, one core each.
    hogs.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  }
}
function stopHogs(): void {
  for (const hog of hogs.splice(0)) hog.kill('SIGKILL');
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stopHogs();
    process.exit(130);
  });
}

interface Run {
  label: string;
  ok: boolean;
  seconds: number;
  failed: string[];
  log: string;
}

async function run(label: string, withHogs: number): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-test-busy-'));
  const clone = join(dir, 'clone');
  execFileSync('git', ['clone', '--quiet', '--no-hardlinks', root, clone]);
  const log = join(dir, 'test.log');
  const out = createWriteStream(log);
  console.log(`${label}: ${withHogs} hog(s), npm ci && npm test in ${clone} (log: ${log})`);
  startHogs(withHogs);
  const started = performance.now();
  const code = await new Promise<number>((resolve) => {
    // CI=true as CI runs it; no colours, so the log reads as text.
    const child = spawn('bash', ['-c', 'npm ci && npm test'], {
      cwd: clone,
      env: { ...process.env, CI: 'true', NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    child.on('close', (exit) => resolve(exit ?? 1));
  });
  stopHogs();
  out.end();
  await new Promise<void>((resolve) => out.on('close', () => resolve()));
  const seconds = Math.round((performance.now() - started) / 1000);
  const text = readFileSync(log, 'utf8');
  const failed = [...new Set(text.split('\n').filter((line) => /^\s*FAIL\s/.test(line)))].map((l) =>
    l.trim(),
  );
  if (!values.keep && code === 0) rmSync(clone, { recursive: true, force: true });
  return { label, ok: code === 0, seconds, failed, log };
}

const results: Run[] = [];
for (let i = 1; i <= quietRuns; i++) results.push(await run(`quiet run ${i}/${quietRuns}`, 0));
for (let i = 1; i <= busyRuns; i++) results.push(await run(`busy run ${i}/${busyRuns}`, hogCount));

console.log(`\nHEAD ${head}, ${hogCount} hog(s) beside each busy run:`);
for (const r of results) {
  console.log(
    `  ${r.label}: ${r.ok ? 'passed' : 'FAILED'} in ${Math.floor(r.seconds / 60)} min ${r.seconds % 60} s`,
  );
  for (const line of r.failed) console.log(`    ${line}`);
  if (!r.ok) console.log(`    log: ${r.log}`);
}
const failures = results.filter((r) => !r.ok).length;
console.log(`${results.length - failures} passed, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
