import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EdgeLimits } from '../../../src/config/config.ts';
import { listen, type RunningServer } from '../../../src/server.ts';
import { createLogger } from '../../../src/shared/logger.ts';
import { DEFAULTS, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { recordSuiteKey, suiteLogDestination } from '../../support/suite-logs.ts';

/**
 * The edge as an attacker meets it, on a listening gateway with raw sockets: connections that
 * send nothing or part of a request are reaped, connections and WebSockets are capped, a
 * WebSocket without a key is never acknowledged, and an idle one is closed.
 */

let t: TestGateway;
let key: string;
const servers: RunningServer[] = [];
const sockets: Socket[] = [];

beforeAll(async () => {
  t = await startTestGateway();
  key = (await t.sandbox.world.merchant()).key;
  recordSuiteKey(key);
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  for (const server of servers) await server.close(100);
  await t.close();
});

/** A listening gateway with these edge limits; its log lines are also pushed to `logLines`. */
async function serve(edge: Partial<EdgeLimits>, logLines?: string[]): Promise<RunningServer> {
  const running = await listen(t.gateway, {
    port: 0,
    host: '127.0.0.1',
    logger: createLogger('debug', suiteLogDestination(logLines)),
    maxRequestBytes: DEFAULTS.maxRequestBytes,
    edge: { ...DEFAULTS.edge, ...edge },
    scopes: t.runtime.scopes,
    keys: { evidence: t.client, callers: t.runtime.callers },
  });
  servers.push(running);
  return running;
}

/** A raw TCP connection to `server`; resolves once connected. `ended`: all it received, at its close. */
async function open(server: RunningServer): Promise<Socket & { ended: Promise<string> }> {
  const { port } = new URL(server.url);
  const socket = connect(Number(port), '127.0.0.1');
  sockets.push(socket);
  let received = '';
  socket.on('data', (chunk) => {
    received += chunk.toString('latin1');
  });
  socket.on('error', () => {});
  const ended = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return Object.assign(socket, { ended });
}

/** Resolves to what `promise` gave, or to 'still open' after `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still open'> {
  return Promise.race([promise, new Promise<'still open'>((r) => setTimeout(() => r('still open'), ms))]);
}

interface WsOutcome {
  acknowledged: boolean;
  closeCode: number | null;
  /** Resolves when the socket closes, with its code. */
  closed: Promise<number>;
  socket: WebSocket;
}

/** A graphql-ws socket that sends connection_init with `payload`; resolves at the ack or the close. */
async function webSocket(server: RunningServer, payload: Record<string, unknown>): Promise<WsOutcome> {
  const socket = new WebSocket(`${server.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
  const outcome: WsOutcome = {
    acknowledged: false,
    closeCode: null,
    socket,
    closed: new Promise((resolve) =>
      socket.addEventListener('close', (event) => {
        outcome.closeCode = event.code;
        resolve(event.code);
      }),
    ),
  };
  socket.addEventListener('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload })));
  await new Promise<void>((resolve) => {
    socket.addEventListener('message', (event) => {
      if (JSON.parse(String(event.data)).type === 'connection_ack') outcome.acknowledged = true;
      resolve();
    });
    socket.addEventListener('close', () => resolve());
    socket.addEventListener('error', () => resolve());
  });
  return outcome;
}

const bearer = (k: string) => ({ Authorization: `Bearer ${k}` });

/**
 * Node's own timeouts far off, for tests of the cap: within what such a test waits, only the cap
 * can close a connection.
 */
const NO_TIMEOUTS = { headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 };

/** Connections the server has open now. */
const openConnections = (server: RunningServer) =>
  new Promise<number>((resolve, reject) =>
    server.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );

describe('connections are reaped', () => {
  // Each test waits far longer than these for the close, and less than the same limit of
  // DEFAULTS.edge (and of Node), so that a gateway that did not apply them fails.
  const timeouts = {
    headersTimeoutMs: 300,
    requestTimeoutMs: 600,
    keepAliveTimeoutMs: 300,
    sendTimeoutMs: 300,
  };

  it('closes a connection that sends nothing once the headers timeout is up', async () => {
    const socket = await open(await serve(timeouts));
    expect(await within(socket.ended, 6_000)).not.toBe('still open');
  });

  it('closes a connection that sent part of a request line, answering 408', async () => {
    const socket = await open(await serve(timeouts));
    socket.write('POST /gra');
    expect(await within(socket.ended, 6_000)).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes a connection whose body does not arrive within the request timeout', async () => {
    const socket = await open(await serve(timeouts));
    // A body that takes the drip below 100 s: it cannot be complete while the test waits.
    socket.write(
      'POST /graphql HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"query"',
    );
    // Trickled: each byte in time for no per-chunk timer, the whole too late.
    const drip = setInterval(() => socket.write(' '), 100);
    const received = await within(socket.ended, 10_000);
    clearInterval(drip);
    expect(received).not.toBe('still open');
    expect(received).not.toMatch(/^HTTP\/1\.1 200/);
  });

  it('closes a keep-alive connection idle after its response', async () => {
    const socket = await open(await serve(timeouts));
    socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
    // Under the 5 s keep-alive of DEFAULTS.edge and of Node.
    expect(await within(socket.ended, 4_000)).toMatch(/^HTTP\/1\.1 200[\s\S]*"status":"ok"/);
  });

  it('closes a connection that asked for a large answer and does not read it', async () => {
    const server = await serve(timeouts);
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => {});
    const closed = new Promise<string>((resolve) => socket.on('close', () => resolve('closed')));
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const page = (
      await (await fetch(`${server.url}/graphql`, { headers: { accept: 'text/html' } })).arrayBuffer()
    ).byteLength;
    // The 9 MB GraphiQL page, uncompressed, into a socket that is not read for a while.
    socket.write('GET /graphql HTTP/1.1\r\nhost: x\r\naccept: text/html\r\n\r\n');
    socket.pause();
    // Not read until the gateway has closed it (the page's own connection closes as idle).
    await expect.poll(() => openConnections(server)).toBe(0);
    let received = 0;
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    socket.resume();
    // Cut off: what had reached this side's buffers, not the whole page, and no keep-alive.
    expect(await within(closed, 10_000)).toBe('closed');
    expect(received).toBeLessThan(page);
  });

  it('keeps an SSE subscription open past the request and send timeouts: they bound receiving and stalls, not answering', async () => {
    const server = await serve(timeouts);
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...bearer(key) },
      body: JSON.stringify({ query: 'subscription { withdrawalIntentsUpdated { id } }' }),
    });
    expect(response.status).toBe(200);
    const reader = response.body?.getReader();
    const ended = reader?.closed.then(() => 'ended');
    expect(await within(ended ?? Promise.resolve('no body'), 1_500)).toBe('still open');
    await reader?.cancel();
  });
});

describe('connections are capped', () => {
  it('past MAX_CONNECTIONS, closes the longest-waiting idle connection so that a real client gets in', async () => {
    const server = await serve({ maxConnections: 3, ...NO_TIMEOUTS });
    const [oldest, ...others] = [await open(server), await open(server), await open(server)];
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await within(oldest?.ended ?? Promise.resolve(''), 10_000)).toBe('');
    for (const socket of others) expect(socket.destroyed).toBe(false);
  });

  it('past MAX_CONNECTIONS, closes a connection whose client stopped reading so that a real client gets in', async () => {
    const server = await serve({ maxConnections: 2, sendTimeoutMs: 60_000 });
    const { port } = new URL(server.url);
    for (const _ of [1, 2]) {
      const socket = connect(Number(port), '127.0.0.1');
      sockets.push(socket);
      socket.on('error', () => {});
      socket.write('GET /graphql HTTP/1.1\r\nhost: x\r\naccept: text/html\r\n\r\n');
      socket.pause();
    }
    // Refused while every connection is busy; let in once a sweep (every second) has seen them
    // make no progress.
    await expect
      .poll(() =>
        fetch(`${server.url}/healthz`).then(
          (response) => response.status,
          () => 0,
        ),
      )
      .toBe(200);
  });

  it('closes the new connection when every one is busy with a request', async () => {
    const server = await serve({ maxConnections: 2, ...NO_TIMEOUTS });
    const streams = await Promise.all(
      [1, 2].map(() =>
        fetch(`${server.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...bearer(key) },
          body: JSON.stringify({ query: 'subscription { withdrawalIntentsUpdated { id } }' }),
        }),
      ),
    );
    expect(streams.map((r) => r.status)).toEqual([200, 200]);
    const refused = await open(server);
    expect(await within(refused.ended, 10_000)).toBe('');
    for (const stream of streams) await stream.body?.cancel();
    await expect.poll(async () => (await fetch(`${server.url}/healthz`).catch(() => null))?.status).toBe(200);
  });
});

describe('WebSockets', () => {
  it('refuses a connection_init without a key with 4401, never acknowledging it', async () => {
    const server = await serve({});
    const outcome = await webSocket(server, {});
    expect(await outcome.closed).toBe(4401);
    expect(outcome.acknowledged).toBe(false);
  });

  it('refuses a malformed key the way HTTP does (4401), and takes the key from the upgrade header too', async () => {
    const server = await serve({});
    const malformed = await webSocket(server, { Authorization: 'Bearer two words' });
    expect(await malformed.closed).toBe(4401);
    expect(malformed.acknowledged).toBe(false);
    const wellFormed = await webSocket(server, bearer(key));
    expect(wellFormed.acknowledged).toBe(true);
    wellFormed.socket.close();
  });

  it('acknowledges at most WEBSOCKETS_PER_KEY sockets of one key; another key is unaffected; a closed one frees its slot', async () => {
    const server = await serve({ webSocketsPerKey: 2 });
    const first = await webSocket(server, bearer(key));
    const second = await webSocket(server, bearer(key));
    const third = await webSocket(server, bearer(key));
    expect([first.acknowledged, second.acknowledged, third.acknowledged]).toEqual([true, true, false]);
    expect(await third.closed).toBe(4429);
    const other = await t.sandbox.world.merchant();
    recordSuiteKey(other.key);
    const otherKey = await webSocket(server, bearer(other.key));
    expect(otherKey.acknowledged).toBe(true);
    first.socket.close();
    await first.closed;
    await expect.poll(async () => (await webSocket(server, bearer(key))).acknowledged).toBe(true);
    for (const outcome of [second, otherKey]) outcome.socket.close();
  });

  it('answers an upgrade past MAX_WEBSOCKETS with 503 before any socket is made, once every socket is of a key accepted lately', async () => {
    const server = await serve({ maxWebSockets: 1 });
    // The key is accepted lately: its socket cannot be closed to make room.
    await t.request('{ wallets(first: 1) { totalCount } }', {}, { key });
    const first = await webSocket(server, bearer(key));
    expect(first.acknowledged).toBe(true);
    const { port } = new URL(server.url);
    const raw = await open({ ...server, url: `http://127.0.0.1:${port}` });
    raw.write(
      'GET /graphql HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: Upgrade\r\n' +
        'sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n' +
        'sec-websocket-protocol: graphql-transport-ws\r\n\r\n',
    );
    expect(await within(raw.ended, 10_000)).toMatch(/^HTTP\/1\.1 503/);
    first.socket.close();
  });

  it('past MAX_WEBSOCKETS full of sockets that never send connection_init, a merchant is acknowledged: the oldest makes room (1013)', async () => {
    const server = await serve({ maxWebSockets: 10 });
    await t.request('{ wallets(first: 1) { totalCount } }', {}, { key });
    const url = `${server.url.replace('http', 'ws')}/graphql`;
    /** Sockets that open and never send connection_init, each with its close code once closed. */
    const silent: { socket: WebSocket; code: number | null }[] = [];
    for (let i = 0; i < 10; i++) {
      const entry = { socket: new WebSocket(url, 'graphql-transport-ws'), code: null as number | null };
      entry.socket.addEventListener('close', (event) => {
        entry.code = event.code;
      });
      silent.push(entry);
      await new Promise((resolve) => entry.socket.addEventListener('open', resolve));
    }
    const merchant = await webSocket(server, bearer(key));
    expect(merchant.acknowledged).toBe(true);
    // The oldest silent socket, and only it, was closed: never more than 10 open.
    await expect.poll(() => silent[0]?.code).toBe(1013);
    expect(silent.slice(1).map((s) => s.code)).toEqual(Array(9).fill(null));
    // Every one of them makes way in turn, oldest first; the merchant keeps its socket.
    const second = await webSocket(server, bearer(key));
    expect(second.acknowledged).toBe(true);
    await expect.poll(() => silent[1]?.code).toBe(1013);
    expect(silent.slice(2).map((s) => s.code)).toEqual(Array(8).fill(null));
    expect(merchant.closeCode).toBeNull();
    for (const { socket } of silent) socket.close();
    for (const outcome of [merchant, second]) outcome.socket.close();
  });

  it('past MAX_WEBSOCKETS full of acknowledged sockets, one of a key not accepted lately makes room for one that is', async () => {
    // An allowance of 1 for keys not accepted lately, taken by a made-up key's socket.
    const server = await serve({ maxWebSockets: 2 });
    await t.request('{ wallets(first: 1) { totalCount } }', {}, { key });
    const known = await webSocket(server, bearer(key));
    const madeUp = await webSocket(server, bearer(`mw_sandbox_${'x'.repeat(32)}`));
    expect([known.acknowledged, madeUp.acknowledged]).toEqual([true, true]);
    const another = await webSocket(server, bearer(key));
    expect(another.acknowledged).toBe(true);
    expect(await madeUp.closed).toBe(1013);
    expect(known.closeCode).toBeNull();
    for (const outcome of [known, another]) outcome.socket.close();
  });

  it('refuses variables nested too deep with a coded error, and the socket stays usable', async () => {
    const server = await serve({});
    const outcome = await webSocket(server, bearer(key));
    const messages: { id?: string; type: string; payload?: unknown }[] = [];
    outcome.socket.addEventListener('message', (event) => messages.push(JSON.parse(String(event.data))));
    // Written by hand: JSON.stringify itself overflows at this depth.
    const deep = `${'{"a":'.repeat(15_000)}1${'}'.repeat(15_000)}`;
    outcome.socket.send(
      `{"id":"deep","type":"subscribe","payload":{"query":"{ __typename }","variables":${deep}}}`,
    );
    outcome.socket.send(
      JSON.stringify({ id: 'ok', type: 'subscribe', payload: { query: '{ __typename }' } }),
    );
    await expect.poll(() => messages.find((m) => m.id === 'ok' && m.type === 'next')).toBeTruthy();
    expect(messages.find((m) => m.id === 'deep')).toMatchObject({
      type: 'error',
      payload: [{ extensions: { code: 'BAD_USER_INPUT' } }],
    });
    expect(outcome.closeCode).toBeNull();
    outcome.socket.close();
  });

  it('closes a socket with no operation once idle, and keeps one whose subscription runs', async () => {
    const server = await serve({ webSocketIdleMs: 200 });
    const idle = await webSocket(server, bearer(key));
    const busy = await webSocket(server, bearer(key));
    expect([idle.acknowledged, busy.acknowledged]).toEqual([true, true]);
    busy.socket.send(
      JSON.stringify({
        id: '1',
        type: 'subscribe',
        payload: { query: 'subscription { withdrawalIntentsUpdated { id } }' },
      }),
    );
    expect(await within(idle.closed, 10_000)).toBe(1000);
    expect(await within(busy.closed, 500)).toBe('still open');
    busy.socket.close();
  });
});

describe('readiness', () => {
  it('probes the REST API on a connection of its own: a probe that hangs takes nothing from real requests', async () => {
    // One pooled connection: were the probe on it, the query would wait behind the hung probe.
    const gw = await startTestGateway({
      upstream: { connections: 1, headersTimeoutMs: 60_000 },
      config: { requestDeadlineMs: 2_000 },
    });
    try {
      const merchant = await gw.sandbox.world.merchant();
      recordSuiteKey(merchant.key);
      await gw.sandbox.admin('POST', '/faults', {
        method: 'GET',
        path: '/external/v1/wallets',
        hang: true,
        times: 1,
      });
      const ready = await gw.gateway.fetch('http://gateway.test/readyz');
      expect(ready.status).toBe(503);
      const { body } = await gw.request('{ wallets(first: 1) { totalCount } }', {}, { key: merchant.key });
      expect(body).toEqual({ data: { wallets: { totalCount: 0 } } });
    } finally {
      await gw.close();
    }
  });
});

describe('shutdown: whatever arrives during the drain is answered or refused, and nothing outlives its deadline', () => {
  const upgrade =
    'GET /graphql HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: Upgrade\r\n' +
    'sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n' +
    'sec-websocket-protocol: graphql-transport-ws\r\n\r\n';

  it('refuses with 503 an upgrade sent on a connection opened before the drain began, and the drain ends', async () => {
    const server = await serve({});
    const raw = await open(server);
    // A deadline far away: the drain can only end before it if that connection is closed.
    const drained = server.close(600_000);
    raw.write(upgrade);
    expect(await raw.ended).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    await drained;
  });

  it('answers a request sent on a kept-alive connection during the drain, asking its client to close, and the drain ends', async () => {
    const server = await serve({});
    const raw = await open(server);
    const drained = server.close(600_000);
    raw.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
    const received = await raw.ended;
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(received.toLowerCase()).toContain('\r\nconnection: close\r\n');
    await drained;
  });

  it('tells a WebSocket 1012 Service Restart, and cuts it at the deadline when its client never completes the close handshake', async () => {
    const logLines: string[] = [];
    const server = await serve({}, logLines);
    const raw = await open(server);
    const switched = new Promise((resolve) => raw.once('data', resolve));
    raw.write(upgrade);
    await switched;
    await server.close(200);
    const received = await raw.ended;
    expect(received).toMatch(/^HTTP\/1\.1 101 Switching Protocols\r\n/);
    // The close frame: opcode 8, 39 bytes, code 1012 and its reason.
    expect(received).toContain('\x88\x27\x03\xf4Service restart: reconnect and resume');
    const cut = logLines
      .map((line) => JSON.parse(line))
      .filter((line) => line.msg.startsWith('shutdown timeout'));
    expect(cut).toMatchObject([
      { connections: 1, msg: 'shutdown timeout reached: closed the remaining connections' },
    ]);
  });
});
