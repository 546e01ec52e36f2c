import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProcess } from '../support/process.ts';
import { captureProcessOutput } from '../support/suite-logs.ts';

/**
 * docs/clients.md ("Use it from your app"), as a new frontend developer follows it: `npm start` with its
 * defaults (no manifest, the embedded sandbox), then each example app run by its documented
 * command, `GATEWAY_URL=… npm run example:apollo`, `… example:urql` and `… example:relay`, with
 * the demo key they default to. The sandbox moves each new withdrawal to a final status on its own clock (about 8 s
 * a step), so each watches its own to the end; they run side by side.
 */

type Started = Awaited<ReturnType<typeof startProcess>>;
const ROOT = new URL('../..', import.meta.url).pathname;
/**
 * How long each example watches its withdrawal. Three steps of 8 s, each seen up to a backed-off
 * poll later, take about 40 s; a watch ends at the final status, so a long bound costs nothing
 * unless the status never comes.
 */
const WATCH_SECONDS = 120;

/** `npm run <script>` in the checkout, as a user types it; its whole output and exit code. */
function npmRun(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  // Not vitest's NODE_ENV=test: a user's shell has none.
  const { NODE_ENV: _, ...inherited } = process.env;
  const child = spawn('npm', ['run', '--silent', script], {
    cwd: ROOT,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, output })));
}

describe('the client examples against npm start', () => {
  let gateway: Started;
  const runs: Record<string, { code: number | null; output: string }> = {};

  beforeAll(
    async () => {
      gateway = await startProcess(
        'src/main.ts',
        [],
        { PORT: '0', NODE_ENV: 'development' },
        /gateway: (http:\/\/\S+)\/graphql/,
      );
      const env = { GATEWAY_URL: gateway.url, WATCH_SECONDS: String(WATCH_SECONDS) };
      const [apollo, urql, relay] = await Promise.all([
        npmRun('example:apollo', env),
        npmRun('example:urql', env),
        npmRun('example:relay', env),
      ]);
      runs.apollo = apollo;
      runs.urql = urql;
      runs.relay = relay;
    },
    // The watch, and three example apps starting side by side on a busy machine.
    (WATCH_SECONDS + 60) * 1_000,
  );
  afterAll(() => {
    if (gateway.child.exitCode === null) gateway.child.kill('SIGKILL');
    captureProcessOutput('npm start (examples)', gateway.output());
    for (const [name, run] of Object.entries(runs)) captureProcessOutput(`example:${name}`, run.output);
  });

  describe.each([
    { name: 'apollo', title: 'Apollo Client', transport: 'WebSocket (graphql-ws)' },
    { name: 'urql', title: 'urql', transport: 'SSE (graphql-sse)' },
    { name: 'relay', title: 'Relay', transport: 'SSE (fetch)' },
  ])('npm run example:$name', ({ name, title, transport }) => {
    const run = () => runs[name] ?? { code: null, output: '' };

    it('exits 0 having warned about nothing', () => {
      expect(run().output).toContain(`${title} example: ${gateway.url}/graphql on Node v24.`);
      expect(run().code).toBe(0);
      expect(run().output).not.toMatch(/Failed:|Invalid key|warn|deprecat/i);
    });

    it("shows the dashboard's wallets with their balances", () => {
      expect(run().output).toMatch(/^Dashboard: 4 wallets$/m);
      expect(
        run().output.match(/^ {2}T\w{5}…\w{4} {2}ACTIVE {2}USDT \d+\.\d{2,} \(locked \d+\.\d{2,}\)/gm),
      ).toHaveLength(4);
    });

    it("shows the first wallet's screen under @defer: its balances, then its lists", () => {
      expect(run().output).toMatch(
        /^Wallet T\w{5}…\w{4}, its lists deferred:\n {2}first: USDT \d+\.\d{2,} \(locked \d+\.\d{2,}\).*\n {2}then: \d+ latest deposits, \d+ latest withdrawals$/m,
      );
    });

    it('pages the activity feed into one list', () => {
      expect(run().output).toMatch(
        /^Activity: \d{3} deposits\n {2}page 1 loaded: 5 shown, more below\n {2}page 2 loaded: 10 shown, more below\n/m,
      );
      expect(
        run().output.match(/^ {4}\d{4}-\d\d-\d\dT\S+ {2}[A-Z]+ {2}\d+\.\d{2,} (USDT|TRX) to T/gm),
      ).toHaveLength(10);
    });

    it('shows the business failure of an invalid withdrawal', () => {
      expect(run().output).toContain(
        'refused: data_invalid (field input.amount): amount must be positive with at most 2 decimal places; received "1.005"',
      );
    });

    it('creates a withdrawal with an idempotency key and sees its statuses through to a final one', () => {
      const output = run().output;
      expect(output).toMatch(/idempotency key example-[0-9a-f-]{36}\n/);
      const restId = /created withdrawal ([0-9a-f-]{36}): PREPARING, fee 1\.50, total 2\.50 USDT/.exec(
        output,
      )?.[1];
      expect(restId).toBeDefined();
      expect(output).toContain(`Withdrawal ${restId}, live over ${transport} (up to ${WATCH_SECONDS} s):`);
      const statuses = [...output.matchAll(/^ {2}\d{4}-\d\d-\d\dT\S+ {2}([A-Z]+)$/gm)].map((m) => m[1]);
      expect(statuses[0]).toBe('PREPARING');
      const final = /^ {2}final status: (COMPLETED|FAILED|CANCELLED)$/m.exec(output)?.[1];
      expect(final).toBeDefined();
      expect(statuses.at(-1)).toBe(final);
      // Each status once: urql hands on a stream's last result again when the stream ends.
      const shown = [...output.matchAll(/^ {2}\d{4}-\d\d-\d\dT\S+ {2}([A-Z]+)/gm)].map((m) => m[1]);
      expect(shown).toEqual([...new Set(shown)]);
    });
  });
});
