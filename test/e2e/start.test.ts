import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RELEASE } from '../../src/process/release.ts';
import { DEFAULT_ADMIN_TOKEN } from '../../src/sandbox/config.ts';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/http/server.ts';
import { DEMO_KEYS, seedWorld } from '../../src/sandbox/seed.ts';
import { eventually } from '../support/fleet-process.ts';
import { startProcess } from '../support/process.ts';
import { ADMIN_TOKEN } from '../support/sandbox.ts';
import { captureProcessOutput } from '../support/suite-logs.ts';

type Started = Awaited<ReturnType<typeof startProcess>>;

describe('npm start: the gateway in front of the embedded sandbox', () => {
  let app: Started;
  let sandboxURL: string;

  beforeAll(async () => {
    app = await startProcess(
      'src/main.ts',
      [],
      // debug: every log line the process writes goes to the suite's key scan. Keep-alive and drain
      // bounds of 10 minutes: the drain must close a connection once its request is answered,
      // not wait for the client to let go of it.
      {
        PORT: '0',
        LOG_LEVEL: 'debug',
        NODE_ENV: 'development',
        KEEP_ALIVE_TIMEOUT_MS: '600000',
        SHUTDOWN_TIMEOUT_MS: '600000',
      },
      /gateway: (http:\/\/\S+)\/graphql/,
    );
    sandboxURL = /embedded sandbox at (http:\/\/\S+)\/external\/v1/.exec(app.output())?.[1] ?? '';
  });
  afterAll(() => {
    if (app.child.exitCode === null) app.child.kill('SIGKILL');
    captureProcessOutput('npm start', app.output());
  });

  const graphql = (query: string, variables: Record<string, unknown> = {}) =>
    fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${DEMO_KEYS.acmeReadWrite}` },
      body: JSON.stringify({ query, variables }),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));

  it('a second npm start on the same port says the port is in use and how to choose another, then exits 1', async () => {
    const port = new URL(app.url).port;
    const { code, output } = await runToExit('npm start (second, same port)', {
      PORT: port,
      NODE_ENV: 'development',
    });
    expect(code).toBe(1);
    expect(output).toContain(
      `Port ${port} is in use (another gateway?). Stop it, or choose another port: PORT=`,
    );
    expect(output).not.toMatch(/\n\s+at /);
  });

  it('prints the GraphiQL URL, the embedded sandbox and a demo key', () => {
    expect(app.output()).toContain(`Demo key (Acme Coffee, read-write): ${DEMO_KEYS.acmeReadWrite}`);
    expect(sandboxURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('answers the seeded world with the demo key', async () => {
    const { status, body } = await graphql('{ wallets(first: 20) { totalCount nodes { address } } }');
    expect(status).toBe(200);
    expect(body.data.wallets.totalCount).toBe(4);
  });

  it('creates a withdrawal with the demo key', async () => {
    const { body: wallets } = await graphql('{ wallets(first: 1) { nodes { id } } }');
    const { body } = await graphql(
      `mutation($input: CreateWithdrawalIntentInput!) { createWithdrawalIntent(input: $input) {
        __typename ... on CreateWithdrawalIntentSuccess { withdrawalIntent { status amountGross } } } }`,
      {
        input: {
          walletId: wallets.data.wallets.nodes[0].id,
          serviceFeeMode: 'EXCLUSIVE',
          currencyCode: 'USDT',
          amount: '5.00',
          destination: { type: 'crypto', rail: 'tron', identifier: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7' },
        },
      },
    );
    expect(body.data.createWithdrawalIntent).toEqual({
      __typename: 'CreateWithdrawalIntentSuccess',
      withdrawalIntent: { status: 'PREPARING', amountGross: '6.5000000000000000' },
    });
  });

  it('serves GraphiQL from local assets, with the example operations and the demo key', async () => {
    const response = await fetch(`${app.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('Merchant Wallet GraphQL');
    expect(html).toContain('query Dashboard');
    expect(html).toContain(DEMO_KEYS.acmeReadWrite);
    expect(html).not.toMatch(/https?:\/\/(unpkg\.com|cdn\.jsdelivr\.net|esm\.sh)/);
  });

  it('answers the README’s curl, and a bad document with 400 under its Accept header', async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const command = /```sh\n(curl localhost:4000\/graphql[\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const headers = Object.fromEntries(
      [...command.matchAll(/-H '([^:]+): ([^']+)'/g)].map((m) => [m[1] as string, m[2] as string]),
    );
    const body = /-d '([^']+)'/.exec(command)?.[1] ?? '';
    expect(headers.accept).toBe('application/graphql-response+json');
    const ok = await fetch(`${app.url}/graphql`, { method: 'POST', headers, body });
    expect(ok.status).toBe(200);
    expect(
      ((await ok.json()) as { data: { wallets: { nodes: unknown[] } } }).data.wallets.nodes.length,
    ).toBeGreaterThan(0);
    const post = (query: string, accept: string) =>
      fetch(`${app.url}/graphql`, {
        method: 'POST',
        headers: { ...headers, accept },
        body: JSON.stringify({ query }),
      }).then((r) => r.status);
    expect(await post('{ wallets(', 'application/graphql-response+json')).toBe(400);
    expect(await post('{ nope }', 'application/graphql-response+json')).toBe(400);
    expect(await post('{ wallets(', '*/*')).toBe(200);
    expect(await post('{ nope }', 'application/json')).toBe(200);
  });

  it('has liveness and readiness endpoints', async () => {
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${app.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ready',
      upstream: 'ok',
      idempotencyStore: 'ok',
      store:
        'in process (this process only: a fleet needs REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES)',
      version: RELEASE,
    });
  });

  it('serves Prometheus metrics, process metrics included, and logs each request', async () => {
    await graphql('query StartCheck { wallets(first: 1) { totalCount } }');
    const metrics = await fetch(`${app.url}/metrics`);
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toMatch(
      /^gateway_graphql_requests_total\{operation_name="StartCheck",operation_type="query",outcome="success",status="200"\} 1$/m,
    );
    expect(text).toMatch(
      /^gateway_upstream_requests_total\{method="GET",route="\/external\/v1\/wallets",status="200"\} [1-9]\d*$/m,
    );
    for (const name of [
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_utilization_ratio',
    ]) {
      expect(text).toMatch(new RegExp(`^${name} `, 'm'));
    }
    const line = app
      .output()
      .split('\n')
      .find((l) => l.includes('"operationName":"StartCheck"') && l.includes('"msg":"request"'));
    expect(JSON.parse(line ?? '{}')).toMatchObject({ msg: 'request', status: 200, upstreamCalls: 1 });
  });

  it('drains an in-flight request on SIGTERM, then exits 0 without waiting for the keep-alive connection', async () => {
    const fault = await fetch(`${sandboxURL}/sandbox/v1/faults`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEFAULT_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ path: '/external/v1/deposits', latencyMs: 500, times: 1 }),
    });
    expect(fault.status).toBe(201);
    const inFlight = graphql('{ deposits(first: 1) { totalCount } }');
    // The sandbox has the request once its log shows it; only then is it in flight.
    for (;;) {
      const log = await fetch(`${sandboxURL}/sandbox/v1/requests`, {
        headers: { authorization: `Bearer ${DEFAULT_ADMIN_TOKEN}` },
      });
      const entries = (await log.json()).data as { path: string }[];
      if (entries.some((e) => e.path.startsWith('/external/v1/deposits'))) break;
    }
    app.child.kill('SIGTERM');
    const { status, body } = await inFlight;
    expect(status).toBe(200);
    expect(body.data.deposits.totalCount).toBeGreaterThan(0);
    expect(await app.exited).toBe(0);
  });
});

describe('npm run sandbox', () => {
  it('serves the REST API with the printed demo key', async () => {
    const sandbox = await startProcess(
      'src/sandbox/main.ts',
      ['--port', '0'],
      { LOG_LEVEL: 'warn' },
      /Try: curl .* (http:\/\/\S+)\/external\/v1\/wallets/,
    );
    try {
      const response = await fetch(`${sandbox.url}/external/v1/wallets`, {
        headers: { authorization: `Bearer ${DEMO_KEYS.acmeReadWrite}` },
      });
      expect(response.status).toBe(200);
      const body = await response.json();
      expect(body.paging.totalCount).toBe(4);
    } finally {
      sandbox.child.kill('SIGTERM');
      expect(await sandbox.exited).toBe(0);
    }
  });

  it('refuses bad options with every problem listed', async () => {
    await expect(
      startProcess('src/sandbox/main.ts', ['--port', 'x', '--deposits=-5'], {}, /never/),
    ).rejects.toThrow(/--port must be an integer >= 0; received "x"[\s\S]*--deposits/);
    await expect(startProcess('src/sandbox/main.ts', ['--colour', 'red'], {}, /never/)).rejects.toThrow(
      /Invalid sandbox options: Unknown option '--colour'/,
    );
  });
});

describe('npm start with bad configuration', () => {
  it('fails fast listing every problem', async () => {
    await expect(
      startProcess('src/main.ts', [], { PORT: 'x', UPSTREAM_URL: 'nope' }, /never/),
    ).rejects.toThrow(/Invalid configuration:[\s\S]*PORT[\s\S]*UPSTREAM_URL/);
  });

  it('refuses a misspelt variable, naming the closest known one, and exits 2', async () => {
    const { code, output } = await runToExit('npm start (misspelt variable)', {
      NODE_ENV: 'development',
      REDIS_ULR: 'redis://127.0.0.1:6379',
      QUERY_MAX_DEPTH: 'deep',
    });
    expect(code).toBe(2);
    expect(output).toContain(
      'Invalid configuration:\n  - REDIS_ULR is not a variable the gateway reads; did you mean REDIS_URL?\n  - QUERY_MAX_DEPTH: must be an integer',
    );
    // Refused before anything started: no sandbox, no listening.
    expect(output).not.toContain('listening');
  });

  it('--check-config checks the environment and starts nothing', async () => {
    const env = { NODE_ENV: 'production', UPSTREAM_URL: 'https://api.example.com', PORT: '1' };
    const valid = await runToExit('--check-config (valid)', env, ['--check-config']);
    expect(valid.code).toBe(0);
    expect(JSON.parse(valid.output.trim())).toMatchObject({
      msg: 'configuration is valid',
      version: RELEASE,
    });
    // PORT 1 would need root: nothing was listened on.
    expect(valid.output).not.toContain('listening');
    const misspelt = await runToExit('--check-config (misspelt)', { ...env, REDIS_ULR: 'redis://x' }, [
      '--check-config',
    ]);
    expect(misspelt.code).toBe(2);
    expect(misspelt.output).toContain(
      'REDIS_ULR is not a variable the gateway reads; did you mean REDIS_URL?',
    );
  });
});

describe('npm start in production', () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ store: seedWorld().store, adminToken: ADMIN_TOKEN, port: 0 });
  });
  afterAll(() => sandbox.close());

  const production = () => ({
    NODE_ENV: 'production',
    UPSTREAM_URL: sandbox.url,
    PORT: '0',
    METRICS_PORT: 'same',
    LOG_LEVEL: 'debug',
  });
  const listening = /"url":"(http:\/\/[^"]+)\/graphql"/;

  it('writes JSON lines only, and says which store it uses', async () => {
    const app = await startProcess('src/main.ts', [], { ...production(), SHUTDOWN_GRACE_MS: '0' }, listening);
    try {
      expect((await query(app.url)).status).toBe(200);
    } finally {
      app.child.kill('SIGTERM');
      expect(await app.exited).toBe(0);
      captureProcessOutput('npm start (production)', app.output());
    }
    const lines = app
      .output()
      .split('\n')
      .filter((line) => line.trim() !== '');
    const notJSON = lines.filter((line) => {
      try {
        JSON.parse(line);
        return false;
      } catch {
        return true;
      }
    });
    expect(notJSON).toEqual([]);
    const started = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'gateway listening');
    expect(started).toMatchObject({
      upstream: sandbox.url,
      store:
        'in process (this process only: a fleet needs REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES)',
      version: RELEASE,
    });
  });

  it('exits 1 when stopping hangs past SHUTDOWN_TIMEOUT_MS (here: the last spans for a collector that never answers)', async () => {
    // A collector that accepts connections and never answers: the exporter's flush at shutdown waits.
    const hung = createServer(() => {});
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    const { port } = hung.address() as AddressInfo;
    const app = await startProcess(
      'src/main.ts',
      [],
      {
        ...production(),
        SHUTDOWN_GRACE_MS: '0',
        SHUTDOWN_TIMEOUT_MS: '200',
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      },
      listening,
    );
    try {
      expect((await query(app.url)).status).toBe(200);
      app.child.kill('SIGTERM');
      expect(await app.exited).toBe(1);
      expect(app.output()).toContain(
        '"msg":"shutdown did not finish within SHUTDOWN_TIMEOUT_MS + 5 s; exiting"',
      );
    } finally {
      if (app.child.exitCode === null) app.child.kill('SIGKILL');
      captureProcessOutput('npm start (production, stop that hangs)', app.output());
      hung.close();
    }
  });

  it('on SIGTERM answers 503 on /readyz and serves everything else, new connections included, until a second SIGTERM ends the grace period', async () => {
    // A grace period far longer than the test may take: only the second signal can end it.
    const app = await startProcess(
      'src/main.ts',
      [],
      { ...production(), SHUTDOWN_GRACE_MS: '300000' },
      listening,
    );
    try {
      expect((await get(app.url, '/readyz')).status).toBe(200);
      app.child.kill('SIGTERM');
      await eventually(
        '/readyz to fail after SIGTERM',
        async () => (await get(app.url, '/readyz')).status === 503,
      );
      expect(JSON.parse((await get(app.url, '/readyz')).body)).toEqual({
        status: 'shutting down',
        store:
          'in process (this process only: a fleet needs REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES)',
        version: RELEASE,
      });
      // Each on a connection of its own: the listener still accepts.
      for (let i = 0; i < 3; i++) {
        const answer = await query(app.url);
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.body).data.wallets.totalCount).toBe(4);
        // Keep-alive clients are asked to reconnect (elsewhere, once the load balancer has seen /readyz).
        expect(answer.headers.connection).toBe('close');
      }
      expect((await get(app.url, '/healthz')).status).toBe(200);
      expect(app.child.exitCode).toBeNull();
      app.child.kill('SIGTERM');
      expect(await app.exited).toBe(0);
      expect(app.output()).toContain('"msg":"second signal: ending the grace period"');
      await expect(get(app.url, '/healthz')).rejects.toThrow();
    } finally {
      if (app.child.exitCode === null) app.child.kill('SIGKILL');
      captureProcessOutput('npm start (production, grace period)', app.output());
    }
  });

  it('METRICS_PORT already taken: one line naming the variable, no stack trace, exit 1', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const { code, output } = await runToExit('npm start (METRICS_PORT taken)', {
        ...production(),
        METRICS_PORT: String(port),
      });
      expect(code).toBe(1);
      expect(output).toContain(
        `METRICS_PORT ${port} is in use (another gateway, or another exporter?). Stop it, or choose another port: METRICS_PORT=${port + 1}, or METRICS_PORT=same to serve /metrics on PORT`,
      );
      expect(output).not.toMatch(/\n\s+at /);
      expect(output).not.toContain('EADDRINUSE');
    } finally {
      taken.close();
    }
  });
});

/** Runs `src/main.ts` with `env` until it exits by itself; its output goes to the suite's logs. */
async function runToExit(label: string, env: Record<string, string>, args: string[] = []) {
  const child = spawn(process.execPath, ['src/main.ts', ...args], {
    cwd: new URL('../..', import.meta.url).pathname,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  captureProcessOutput(label, output);
  return { code, output };
}

interface PlainAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request on a new connection (no pooling), so each proves the listener still accepts. */
function request(url: string, path: string, body?: string): Promise<PlainAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}${path}`,
      {
        method: body ? 'POST' : 'GET',
        agent: false,
        headers: body
          ? { 'content-type': 'application/json', authorization: `Bearer ${DEMO_KEYS.acmeReadWrite}` }
          : {},
        timeout: 10_000,
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`${path}: no answer`)));
    req.end(body);
  });
}

const get = (url: string, path: string) => request(url, path);
const query = (url: string) =>
  request(url, '/graphql', JSON.stringify({ query: '{ wallets(first: 5) { totalCount } }' }));
