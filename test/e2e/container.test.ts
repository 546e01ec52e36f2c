import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RELEASE } from '../../src/process/release.ts';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/http/server.ts';
import { DEMO_KEYS, seedWorld } from '../../src/sandbox/seed.ts';
import {
  BASE_IMAGE,
  type BaseImageResult,
  type BuildResult,
  buildImage,
  ensureBaseImage,
  processIds,
  type RunningContainer,
  removeStaleContainers,
  runContainer,
  userNameInRoot,
} from '../support/container.ts';
import { freePort } from '../support/process.ts';
import { ADMIN_TOKEN } from '../support/sandbox.ts';
import { captureProcessOutput } from '../support/suite-logs.ts';

/**
 * The repository's Dockerfile, built as it is (buildah, no daemon) on `node:24-slim` (a stand-in
 * made from Debian's packages where Docker Hub cannot be reached), and the image run in front of
 * a seeded sandbox, as an operator would run it: production settings from the image, PORT, HOST
 * and UPSTREAM_URL from the environment. The slow part (base image, build) is in beforeAll, with
 * its own bound; every command under it has one too.
 */
const IMAGE = 'merchant-wallet-gateway:test';
const MB = 1_000_000;

describe('the container image', () => {
  let sandbox: RunningSandbox;
  let base: BaseImageResult;
  let build: BuildResult;
  let gateway: RunningContainer | undefined;
  let url: string;
  let metricsPort: number;
  const timings: string[] = [];
  const started = performance.now();

  beforeAll(async () => {
    await removeStaleContainers();
    sandbox = await startSandbox({ store: seedWorld().store, adminToken: ADMIN_TOKEN, port: 0 });
    base = await ensureBaseImage();
    timings.push(
      `base image ${base.source} in ${seconds(base.ms)}` +
        (base.mmdebstrapMs === undefined ? '' : ` (mmdebstrap ${seconds(base.mmdebstrapMs)})`),
    );
    build = await buildImage(IMAGE);
    timings.push(`build ${seconds(build.ms)}`);
    const port = await freePort();
    metricsPort = await freePort();
    url = `http://127.0.0.1:${port}`;
    const runStarted = performance.now();
    gateway = await runContainer(
      IMAGE,
      {
        PORT: String(port),
        // The host's network: loopback only, not every interface (the image's default is 0.0.0.0).
        HOST: '127.0.0.1',
        UPSTREAM_URL: sandbox.url,
        // Production serves metrics on a port of their own, 9464 unless told: another gateway may have it.
        METRICS_PORT: String(metricsPort),
      },
      /"msg":"gateway listening"/,
    );
    timings.push(`container up in ${seconds(performance.now() - runStarted)}`);
  }, 900_000);

  afterAll(async () => {
    if (gateway) captureProcessOutput(`container ${IMAGE}`, gateway.output());
    await gateway?.remove();
    await sandbox?.close();
    console.log(`Container test: ${timings.join(', ')}; whole file ${seconds(performance.now() - started)}`);
  }, 60_000);

  const graphql = (query: string) =>
    fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${DEMO_KEYS.acmeReadWrite}` },
      body: JSON.stringify({ query }),
      signal: AbortSignal.timeout(20_000),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));

  it('answers /healthz, /readyz and a GraphQL query with the demo key, through the upstream it is given', async () => {
    expect((await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) })).status).toBe(200);
    const ready = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(10_000) });
    expect(await ready.json()).toEqual({
      status: 'ready',
      upstream: 'ok',
      idempotencyStore: 'ok',
      store:
        'in process (this process only: a fleet needs REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES)',
      version: RELEASE,
    });
    const before = sandbox.sandbox.externalRequests;
    const { status, body } = await graphql('{ wallets(first: 20) { totalCount nodes { address } } }');
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data.wallets.totalCount).toBe(4);
    expect(body.data.wallets.nodes).toHaveLength(4);
    expect(sandbox.sandbox.externalRequests).toBeGreaterThan(before);
  });

  it('runs in production mode, with metrics on METRICS_PORT', async () => {
    expect((await graphql('{ wallets(first: 1) { totalCount } }')).status).toBe(200);
    expect(build.image.config.Env).toContain('NODE_ENV=production');
    // GraphiQL is off in production: a browser gets no page.
    const page = await fetch(`${url}/graphql`, {
      headers: { accept: 'text/html' },
      signal: AbortSignal.timeout(10_000),
    });
    expect(await page.text()).not.toContain('GraphiQL');
    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, {
      signal: AbortSignal.timeout(10_000),
    });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^gateway_graphql_requests_total\{.*status="200"\} [1-9]/m);
  });

  it('writes JSON log lines only', () => {
    const lines = (gateway as RunningContainer)
      .output()
      .split('\n')
      .filter((line) => line.trim() !== '');
    expect(lines.length).toBeGreaterThan(0);
    expect(
      lines.filter((line) => {
        try {
          JSON.parse(line);
          return false;
        } catch {
          return true;
        }
      }),
    ).toEqual([]);
  });

  it('leaves the embedded sandbox out: without UPSTREAM_URL the gateway says so and exits 2', async () => {
    const container = gateway as RunningContainer;
    expect((await container.exec(['test', '-e', '/app/src/sandbox'])).code).toBe(1);
    expect((await container.exec(['test', '-e', '/app/src/main.ts'])).code).toBe(0);
    // The image's NODE_ENV=production refuses to start without it…
    const production = await container.exec(['node', 'src/main.ts']);
    expect(production.code).toBe(2);
    expect(production.output).toContain('UPSTREAM_URL: required when NODE_ENV=production');
    // …and so does development, where it would have started the sandbox.
    const development = await container.exec(['node', 'src/main.ts'], { NODE_ENV: 'development' });
    expect(development.code).toBe(2);
    expect(development.output).toContain(
      'UPSTREAM_URL: required here: this installation has no embedded sandbox (the production image leaves it out)',
    );
  });

  it('runs the gateway as the image’s user node (uid 1000), not root', () => {
    expect(build.image.config.User).toBe('node');
    const { uids, gids } = processIds(gateway?.pid ?? 0);
    // Real, effective, saved and filesystem ids of the running process.
    expect(uids).toEqual([1000, 1000, 1000, 1000]);
    expect(gids).toEqual([1000, 1000, 1000, 1000]);
    expect(userNameInRoot(gateway?.pid ?? 0, 1000)).toBe('node');
  });

  it('keeps the Dockerfile’s HEALTHCHECK, which passes against the gateway and fails without one', async () => {
    const test = build.image.config.Healthcheck?.Test ?? [];
    expect(test[0]).toBe('CMD-SHELL');
    const command = ['/bin/sh', '-c', test[1] ?? 'false'];
    const port = new URL(url).port;
    const healthy = await gateway?.exec(command, { PORT: port });
    expect(healthy?.code).toBe(0);
    const nobody = await gateway?.exec(command, { PORT: String(await freePort()) });
    expect(nobody?.code).toBe(1);
  });

  it('is a reasonable size: below 400 MB, of which the Dockerfile’s own layers below 150 MB', () => {
    const baseLayers = new Set(base.image.layers.map((layer) => layer.digest));
    const own = build.image.layers.filter((layer) => !baseLayers.has(layer.digest));
    const ownBytes = own.reduce((sum, layer) => sum + layer.size, 0);
    console.log(
      `Image ${IMAGE}: ${(build.image.sizeBytes / MB).toFixed(0)} MB ` +
        `(${BASE_IMAGE}, ${base.source === 'reused' ? 'from storage' : base.source}: ${(base.image.sizeBytes / MB).toFixed(0)} MB; ` +
        `the Dockerfile's layers: ${(ownBytes / MB).toFixed(0)} MB)`,
    );
    // The build is on the base: every base layer is in the image.
    expect(build.image.layers.slice(0, base.image.layers.length)).toEqual(base.image.layers);
    expect(own.length).toBeGreaterThan(0);
    // Production dependencies, sources and schema: dev dependencies would take it well past this.
    expect(ownBytes).toBeLessThan(150 * MB);
    expect(build.image.sizeBytes).toBeLessThan(400 * MB);
  });

  it('on SIGTERM fails /readyz while it serves for the grace period, finishes the request in flight, then exits 0', async () => {
    const container = gateway as RunningContainer;
    const fault = await fetch(`${sandbox.url}/sandbox/v1/faults`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ path: '/external/v1/deposits', latencyMs: 1_000, times: 1 }),
      signal: AbortSignal.timeout(10_000),
    });
    expect(fault.status).toBe(201);
    const inFlight = graphql('{ deposits(first: 1) { totalCount } }');
    // In flight once the sandbox has it (the fault holds its answer for a second).
    const giveUpAt = Date.now() + 10_000;
    while (!sandbox.sandbox.requests.some((r) => r.path.startsWith('/external/v1/deposits'))) {
      if (Date.now() > giveUpAt) throw new Error('the deposits request never reached the sandbox');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const signalled = performance.now();
    const signalledAt = Date.now();
    process.kill(container.pid, 'SIGTERM');
    // The grace period (SHUTDOWN_GRACE_MS, 5 s in production): /readyz fails, everything else is served.
    for (;;) {
      const ready = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(10_000) });
      if (ready.status === 503) break;
      if (performance.now() - signalled > 10_000) throw new Error('/readyz still answers 200 after SIGTERM');
    }
    expect((await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) })).status).toBe(200);
    const { status, body } = await inFlight;
    expect(status).toBe(200);
    expect(body.data.deposits.totalCount).toBeGreaterThan(0);
    const code = await Promise.race([
      container.exited,
      new Promise<string>((resolve) => setTimeout(() => resolve('still running after 15 s'), 15_000)),
    ]);
    expect(code).toBe(0);
    const exitedMs = performance.now() - signalled;
    expect(container.output()).toContain('"graceMs":5000,"msg":"shutting down: /readyz answers 503');
    expect(container.output()).toContain('"msg":"draining in-flight requests"');
    const stopped = container
      .output()
      .split('\n')
      .find((line) => line.includes('"msg":"stopped"'));
    expect(stopped).toBeDefined();
    const stoppedMs = (JSON.parse(stopped ?? '{}') as { time: number }).time - signalledAt;
    timings.push(
      `after SIGTERM the gateway logged "stopped" in ${seconds(stoppedMs)}, buildah run exited in ${seconds(exitedMs)}`,
    );
    await expect(fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) })).rejects.toThrow();
  }, 30_000);
});

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
