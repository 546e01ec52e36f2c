import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultInput } from '../validate.ts';

/**
 * Fault injection into /external routes (POST /sandbox/v1/faults): latency, error statuses and
 * bodies, connection resets, hangs, truncated and dripping bodies, late answers, and answers lost
 * after the route ran; each for every matching request or for one X-Request-Id. The gateway's
 * resilience tests and frontends that want to see their error screens script these.
 */

export interface Fault extends FaultInput {
  id: string;
}

/** What an injected fault did to the request: answered it, or let it through to its route. */
export type FaultOutcome =
  /** The fault answered (or dropped) the request; `status` is logged (-1: no answer). */
  { handled: true; status: number } | { handled: false };

export class Faults {
  readonly list: Fault[] = [];

  add(fault: Fault): void {
    this.list.push(fault);
  }

  clear(): void {
    this.list.length = 0;
  }

  /**
   * The first fault matching the request (method, path prefix and, for a fault that names one, the
   * X-Request-Id header the caller sent), counting down its `times`. A fault for another request
   * id is left alone.
   */
  take(method: string, path: string, requestId: string | undefined): Fault | undefined {
    const index = this.list.findIndex(
      (f) =>
        (f.method === undefined || f.method === method) &&
        path.startsWith(f.path) &&
        (f.requestId === undefined || f.requestId === requestId),
    );
    const fault = this.list[index];
    if (!fault) return undefined;
    if (fault.times !== null && --fault.times === 0) this.list.splice(index, 1);
    return fault;
  }
}

/**
 * Applies the part of a fault that happens before the route runs. `wait` resolves false when the
 * client went away meanwhile, and then nothing more is written. `respondAfterMs` and
 * `resetAfterRoute` are not applied here: the route runs first (see the server).
 */
export async function injectFault(
  fault: Fault,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  wait: (ms: number) => Promise<boolean>,
): Promise<FaultOutcome> {
  if (fault.latencyMs > 0 && !(await wait(fault.latencyMs))) return { handled: true, status: 0 };
  if (fault.hang) return { handled: true, status: -1 };
  if (fault.reset) {
    req.socket.destroy();
    return { handled: true, status: -1 };
  }
  if (fault.status === undefined) return { handled: false };
  const body = Buffer.from(
    fault.body ?? JSON.stringify({ code: 'fault_injected', message: 'Injected fault.', data: null }),
  );
  res.writeHead(fault.status, {
    'content-type': 'application/json',
    'content-length': body.length,
    'x-request-id': requestId,
    ...fault.headers,
  });
  if (fault.truncate) {
    res.write(body.subarray(0, Math.floor(body.length / 2)), () => req.socket.destroy());
  } else if (fault.dripMs !== undefined) {
    await drip(res, body, fault.dripMs, wait);
  } else {
    res.end(body);
  }
  return { handled: true, status: fault.status };
}

/** Sends the body one byte every `ms`; stops writing once the client has gone. */
async function drip(
  res: ServerResponse,
  body: Buffer,
  ms: number,
  wait: (ms: number) => Promise<boolean>,
): Promise<void> {
  for (const byte of body) {
    if (res.destroyed) return;
    res.write(Buffer.from([byte]));
    if (!(await wait(ms))) return;
  }
  res.end();
}
