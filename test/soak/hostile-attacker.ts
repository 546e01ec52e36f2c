/**
 * One attacker process of `npm run hostile` (hostile.ts starts it): it opens and holds connections,
 * WebSockets or a request flood against the gateway as the parent commands over IPC, and reports
 * every second what the gateway did to them. It is a process of its own so that its event loop
 * does not delay the parent's probe, and so that it has its own file-descriptor limit: the parent
 * spreads a large count over several attackers.
 *
 * Contract: one attack at a time. `{ cmd: 'stop' }` resets every connection it holds (so no
 * TIME_WAIT is left behind), answers `{ type: 'stopped', report }` and the process waits for the
 * next command; it exits when the parent goes away.
 */
import { createHash } from 'node:crypto';
import { Agent, type IncomingMessage, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import WebSocket from 'ws';

export type AttackCommand =
  | { cmd: 'idle'; host: string; port: number; count: number; partialShare: number; localAddresses: string[] }
  | {
      cmd: 'loris';
      host: string;
      port: number;
      /** Connections of each kind: headers, keyed body, keyless body. */
      count: number;
      intervalMs: number;
      authorization: string;
      localAddresses: string[];
    }
  | { cmd: 'websockets'; url: string; count: number; localAddresses: string[] }
  | { cmd: 'readyz'; host: string; port: number; callers: number }
  | { cmd: 'graphiql'; host: string; port: number; loads: number }
  | { cmd: 'slow-readers'; host: string; port: number; count: number; localAddresses: string[] }
  | {
      /**
       * `documents`: unique ~84 KB keyless documents (2,880 fields and as many comments) that parse
       * and fail validation; `apq`: keyless APQ registrations of unique ~95 KB texts under their
       * own sha256 (they need not parse). `count` POSTs, `concurrency` at a time.
       */
      cmd: 'documents' | 'apq';
      host: string;
      port: number;
      count: number;
      concurrency: number;
    }
  | { cmd: 'stop' };

/** What happened to the connections of one kind (idle, partial, headers, ws…). */
export interface Tally {
  attempted: number;
  connected: number;
  /** Connected and not yet closed by the gateway. */
  open: number;
  /** WebSockets only: acknowledged (connection_ack) and still open. */
  openAcked: number;
  /** WebSockets only: ever acknowledged. */
  acked: number;
  /** Connections that never got through (connect error, timeout, upgrade refused), by reason. */
  failed: Record<string, number>;
  /** Connections the gateway closed, by whole seconds between connecting and the close. */
  closedAfter: Record<string, number>;
  /** What the gateway said: an HTTP status line, or a WebSocket close code and reason. */
  answers: Record<string, number>;
}

export interface Flood {
  done: number;
  inFlight: number;
  statuses: Record<string, number>;
  errors: Record<string, number>;
  bytes: number;
  /** Filled in the final report only. */
  latencyMs?: { p50: number; p99: number; max: number };
}

export interface AttackReport {
  kinds: Record<string, Tally>;
  flood?: Flood;
}

const CONNECT_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
/** Connects or handshakes under way at once per attacker: more only overflows the listen backlog. */
const OPENING = 200;

export function emptyTally(): Tally {
  return {
    attempted: 0,
    connected: 0,
    open: 0,
    openAcked: 0,
    acked: 0,
    failed: {},
    closedAfter: {},
    answers: {},
  };
}

function bump(map: Record<string, number>, key: string, by = 1): void {
  map[key] = (map[key] ?? 0) + by;
}

let report: AttackReport = { kinds: {} };
/** Undoes the current attack: resets what it holds and stops its loops. */
let release: () => void = () => {};
/** Aborted when the current attack is stopped; each attack captures its own. */
let current = new AbortController();
const latencies: number[] = [];

/** Runs `open(i)` for i < count with at most OPENING of them unsettled at once. */
async function openAll(count: number, open: (i: number) => Promise<void>): Promise<void> {
  const { signal } = current;
  let next = 0;
  const lane = async () => {
    while (!signal.aborted && next < count) await open(next++);
  };
  await Promise.all(Array.from({ length: Math.min(OPENING, count) }, lane));
}

/**
 * Opens raw TCP connections and keeps them, each sending `prefix` once connected; `tick` (if any)
 * then sends one more byte to each open connection every `intervalMs`.
 */
function holdSockets(
  options: { host: string; port: number; localAddresses: string[] },
  /** `read: false`: the socket is paused once its request is sent, and never reads a byte. */
  plan: { kind: string; prefix: string; drip?: string; read?: boolean }[],
  intervalMs?: number,
): void {
  const { signal } = current;
  const sockets = new Set<Socket>();
  const dripping = new Map<Socket, string>();
  for (const { kind } of plan) report.kinds[kind] = emptyTally();
  void openAll(plan.length, (i) => {
    const item = plan[i] as (typeof plan)[number];
    const tally = report.kinds[item.kind] as Tally;
    tally.attempted++;
    return new Promise<void>((settle) => {
      const socket = connect({
        host: options.host,
        port: options.port,
        localAddress: options.localAddresses[i % options.localAddresses.length],
      });
      sockets.add(socket);
      let connectedAt = 0;
      let error = '';
      let answered = false;
      socket.setTimeout(CONNECT_TIMEOUT_MS, () => {
        if (connectedAt) return;
        error = 'connect timeout';
        socket.destroy();
      });
      socket.once('connect', () => {
        connectedAt = Date.now();
        socket.setTimeout(0);
        tally.connected++;
        tally.open++;
        if (item.prefix) socket.write(item.prefix);
        if (item.drip) dripping.set(socket, item.drip);
        if (item.read === false) socket.pause();
        settle();
      });
      socket.on('data', (chunk: Buffer) => {
        if (answered) return;
        answered = true;
        bump(tally.answers, chunk.toString('latin1').split('\r\n')[0]?.slice(0, 60) || '(empty)');
      });
      socket.on('error', (e: NodeJS.ErrnoException) => {
        error ||= e.code ?? e.message;
      });
      socket.once('close', () => {
        sockets.delete(socket);
        dripping.delete(socket);
        settle();
        if (signal.aborted) return;
        if (connectedAt) {
          tally.open--;
          bump(tally.closedAfter, String(Math.floor((Date.now() - connectedAt) / 1000)));
          if (!answered) bump(tally.answers, error ? `(no answer; ${error})` : '(closed without an answer)');
        } else {
          bump(tally.failed, error || 'closed before connecting');
        }
      });
    });
  });
  const timer =
    intervalMs === undefined
      ? undefined
      : setInterval(() => {
          for (const [socket, byte] of dripping) if (!socket.destroyed) socket.write(byte);
        }, intervalMs);
  release = () => {
    clearInterval(timer);
    for (const socket of sockets) socket.resetAndDestroy();
    sockets.clear();
  };
}

function holdWebSockets(command: Extract<AttackCommand, { cmd: 'websockets' }>): void {
  const { signal } = current;
  const sockets = new Set<WebSocket>();
  const tally = emptyTally();
  report.kinds.websocket = tally;
  void openAll(command.count, (i) => {
    tally.attempted++;
    return new Promise<void>((settle) => {
      const ws = new WebSocket(command.url, 'graphql-transport-ws', {
        localAddress: command.localAddresses[i % command.localAddresses.length],
        handshakeTimeout: CONNECT_TIMEOUT_MS,
        perMessageDeflate: false,
      });
      sockets.add(ws);
      let openedAt = 0;
      let acked = false;
      let failure = '';
      ws.once('unexpected-response', (req, res: IncomingMessage) => {
        failure = `upgrade answered ${res.statusCode}`;
        res.resume();
        req.destroy();
      });
      ws.once('open', () => {
        openedAt = Date.now();
        tally.connected++;
        tally.open++;
        ws.send(JSON.stringify({ type: 'connection_init', payload: {} }));
        settle();
      });
      ws.on('message', (data) => {
        let type: unknown;
        try {
          type = JSON.parse(String(data)).type;
        } catch {
          type = 'unparsable';
        }
        if (type === 'connection_ack' && !acked) {
          acked = true;
          tally.acked++;
          tally.openAcked++;
        } else bump(tally.answers, `message ${String(type)}`);
      });
      ws.on('error', (e: NodeJS.ErrnoException) => {
        failure ||= e.code ?? e.message.slice(0, 60);
      });
      ws.once('close', (code, reason) => {
        sockets.delete(ws);
        settle();
        if (signal.aborted) return;
        if (openedAt) {
          tally.open--;
          if (acked) tally.openAcked--;
          bump(tally.closedAfter, String(Math.floor((Date.now() - openedAt) / 1000)));
          bump(tally.answers, `close ${code}${reason.length ? ` ${reason.toString().slice(0, 50)}` : ''}`);
        } else {
          bump(tally.failed, failure || `closed ${code} before opening`);
        }
      });
    });
  });
  release = () => {
    for (const ws of sockets) ws.terminate();
    sockets.clear();
  };
}

/** `callers` loops of GET /readyz on keep-alive connections, each request bounded. */
function floodReadiness(command: Extract<AttackCommand, { cmd: 'readyz' }>): void {
  const agent = new Agent({ keepAlive: true, maxSockets: command.callers });
  const flood = newFlood();
  const { signal } = current;
  const caller = async () => {
    while (!signal.aborted) await get(command.host, command.port, '/readyz', {}, agent, flood);
  };
  for (let i = 0; i < command.callers; i++) void caller();
  release = () => agent.destroy();
}

/** `loads` GETs of the GraphiQL page at once, each on its own connection, uncompressed. */
function loadGraphiQL(command: Extract<AttackCommand, { cmd: 'graphiql' }>): void {
  const flood = newFlood();
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  for (let i = 0; i < command.loads; i++) {
    void get(command.host, command.port, '/graphql', { accept: 'text/html' }, agent, flood);
  }
  release = () => agent.destroy();
}

/** A unique ~84 KB document under every query limit: 2,880 tokens, and a comment after each. */
export function outsiderDocument(n: number): string {
  const fields = Array.from({ length: 2_880 }, (_, i) => `f${i} # ${'x'.repeat(20)}\n`).join('');
  return `query Outsider${n}_${process.pid} {\n${fields}}`;
}

/** A unique ~95 KB APQ registration: a text (one long name, it does not parse) and its own sha256. */
export function outsiderRegistration(n: number): string {
  const query = `{ outsider${n}_${process.pid}${'y'.repeat(95_000)} `;
  const hash = createHash('sha256').update(query).digest('hex');
  return JSON.stringify({ query, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
}

/** `count` keyless POSTs of `body(n)`, `concurrency` at a time, on keep-alive connections. */
function floodPosts(
  command: Extract<AttackCommand, { cmd: 'documents' | 'apq' }>,
  body: (n: number) => string,
): void {
  const agent = new Agent({ keepAlive: true, maxSockets: command.concurrency });
  const flood = newFlood();
  const { signal } = current;
  let next = 0;
  const lane = async () => {
    while (!signal.aborted && next < command.count) {
      const payload = body(next++);
      await send(
        command.host,
        command.port,
        'POST',
        '/graphql',
        { 'content-type': 'application/json' },
        payload,
        agent,
        flood,
      );
    }
  };
  for (let i = 0; i < command.concurrency; i++) void lane();
  release = () => agent.destroy();
}

function newFlood(): Flood {
  latencies.length = 0;
  report.flood = { done: 0, inFlight: 0, statuses: {}, errors: {}, bytes: 0 };
  return report.flood;
}

/** One GET; its body is counted, not kept. Never rejects. */
function get(
  host: string,
  port: number,
  path: string,
  headers: Record<string, string>,
  agent: Agent,
  flood: Flood,
): Promise<void> {
  return send(host, port, 'GET', path, headers, null, agent, flood);
}

/** One request; the answer's body is counted, not kept. Never rejects. */
function send(
  host: string,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string | null,
  agent: Agent,
  flood: Flood,
): Promise<void> {
  const { signal } = current;
  const started = performance.now();
  flood.inFlight++;
  return new Promise<void>((resolve) => {
    let settled = false;
    const finish = (status: string | null, error: string | null) => {
      if (settled) return;
      settled = true;
      flood.inFlight--;
      if (signal.aborted) return resolve();
      flood.done++;
      latencies.push(performance.now() - started);
      if (status) bump(flood.statuses, status);
      if (error) bump(flood.errors, error);
      resolve();
    };
    const req = request({ host, port, method, path, headers, agent, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      const encoding = res.headers['content-encoding'];
      res.on('data', (chunk: Buffer) => {
        flood.bytes += chunk.length;
      });
      res.on('end', () => finish(`${res.statusCode}${encoding ? ` ${encoding}` : ''}`, null));
      res.on('error', (e: NodeJS.ErrnoException) => finish(null, e.code ?? e.message));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })));
    req.on('error', (e: NodeJS.ErrnoException) => finish(null, e.code ?? e.message));
    req.end(body ?? undefined);
  });
}

function percentile(sorted: number[], p: number): number {
  return Math.round((sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0) * 10) / 10;
}

const timer = setInterval(() => process.send?.({ type: 'report', report }), 1_000);
process.on('disconnect', () => {
  release();
  process.exit(0);
});
process.on('message', (command: AttackCommand) => {
  if (command.cmd === 'stop') {
    current.abort();
    release();
    release = () => {};
    if (report.flood && latencies.length) {
      const sorted = latencies.toSorted((a, b) => a - b);
      report.flood.latencyMs = {
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        max: percentile(sorted, 1),
      };
    }
    process.send?.({ type: 'stopped', report });
    return;
  }
  current = new AbortController();
  report = { kinds: {} };
  const { host, port } = command as { host: string; port: number };
  switch (command.cmd) {
    case 'idle': {
      // Interleaved, so that a connection cap meets both kinds alike.
      const share = command.partialShare;
      holdSockets(
        command,
        Array.from({ length: command.count }, (_, i) =>
          Math.floor((i + 1) * share) > Math.floor(i * share)
            ? { kind: 'partial', prefix: 'POST /gra' }
            : { kind: 'idle', prefix: '' },
        ),
      );
      break;
    }
    case 'loris': {
      const head = `GET /graphql HTTP/1.1\r\nHost: ${host}:${port}\r\nX-Loris: `;
      const body = (authorization: string) =>
        `POST /graphql HTTP/1.1\r\nHost: ${host}:${port}\r\ncontent-type: application/json\r\n${authorization}` +
        'content-length: 50000\r\n\r\n{"query":"';
      const kinds = [
        { kind: 'headers', prefix: head, drip: 'a' },
        { kind: 'body (keyed)', prefix: body(`authorization: ${command.authorization}\r\n`), drip: ' ' },
        { kind: 'body (keyless)', prefix: body(''), drip: ' ' },
      ];
      holdSockets(
        command,
        Array.from(
          { length: command.count * kinds.length },
          (_, i) => kinds[i % kinds.length] as (typeof kinds)[0],
        ),
        command.intervalMs,
      );
      break;
    }
    case 'slow-readers':
      holdSockets(
        command,
        Array.from({ length: command.count }, () => ({
          kind: 'slow reader',
          prefix: `GET /graphql HTTP/1.1\r\nHost: ${host}:${port}\r\naccept: text/html\r\n\r\n`,
          read: false,
        })),
      );
      break;
    case 'websockets':
      holdWebSockets(command);
      break;
    case 'readyz':
      floodReadiness(command);
      break;
    case 'graphiql':
      loadGraphiQL(command);
      break;
    case 'documents':
      floodPosts(command, (n) => JSON.stringify({ query: outsiderDocument(n) }));
      break;
    case 'apq':
      floodPosts(command, outsiderRegistration);
      break;
  }
});
process.send?.({ type: 'ready' });
timer.unref();
