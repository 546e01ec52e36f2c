import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FormattedExecutionResult } from 'graphql';
import { CloseCode, type Context } from 'graphql-ws';
import { type Extra, useServer } from 'graphql-ws/use/ws';
import type { Logger } from 'pino';
import { type WebSocket, WebSocketServer } from 'ws';
import { nestingError } from '../plugins/query-limits.ts';
import { schema } from '../schema/index.ts';
import type { Caller } from '../upstream/caller.ts';
import type { CallerScopes } from '../upstream/caller-scope.ts';
import type { Callers } from '../upstream/callers.ts';
import type { KeyProof } from '../upstream/key-proofs.ts';
import type { Gateway } from '../yoga.ts';
import {
  authorizationOf,
  BRIDGED,
  type Bridged,
  bridge,
  headersOf,
  RESTART_REASON,
  SERVICE_RESTART,
} from './bridge.ts';
import { type AcknowledgedSocket, UnprovenAllowance } from './unproven-allowance.ts';

/**
 * GraphQL over WebSocket (graphql-ws) at the gateway's GraphQL path. Each operation runs through the
 * HTTP pipeline (bridge.ts hands it to `gateway.fetch` as an SSE POST), so every rule of an HTTP
 * request applies to it as is. The key comes in the connection_init payload (`Authorization`), else
 * the upgrade's header, and lives in this socket's memory only. The close codes, the caps, and which
 * socket makes room past `max`: docs/subscriptions.md (Transports, WebSocket admission). Serves the
 * upgrades it is handed (server.ts) and listens on no server of its own.
 */
export function serveGraphQLOverWebSocket(
  gateway: Gateway,
  options: {
    path: string;
    maxPayload: number;
    logger: Logger;
    /** WebSockets of this process, from the upgrade; past it one that proves nothing makes room, else 503. */
    max: number;
    /** Acknowledged WebSockets of one key; past it connection_init is refused with 4429. */
    perKey: number;
    /** A socket with no operation under way for this long is closed (1000). */
    idleMs: number;
    /** Callers' scopes (the runtime's): sockets are counted per scope. */
    scopes: Pick<CallerScopes, 'scopeOf'>;
    /**
     * What the REST API said of keys lately (the upstream client), and the Caller of a key's proof.
     * Without it no key is accepted: every socket must fit in the allowance (`unproven`).
     */
    keys?: { evidence: KeyEvidenceSource; callers: Pick<Callers, 'forOneCall'> };
    /** Acknowledged sockets of keys not accepted lately, all keys together; default 5 % of `max`. */
    unproven?: number;
  },
): {
  /** Completes the handshake of an upgrade request, or answers it with an HTTP error and closes it. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Closes every socket with 1012 Service Restart (clients reconnect, resume); resolves once all closed. */
  close(): Promise<void>;
} {
  const wss = new WebSocketServer({
    noServer: true,
    // Upgrades to another path are answered 400.
    path: options.path,
    maxPayload: options.maxPayload,
    // Counted before the upgrade, so that past the cap the client gets an HTTP answer, not a socket.
    verifyClient: (_info, accept) => {
      if (counted.size < options.max || makeRoom()) accept(true);
      else accept(false, 503, 'Too many WebSockets', { 'retry-after': '5' });
    },
  });
  wss.on('error', (error) => options.logger.warn({ err: error.message }, 'websocket server error'));
  /** Acknowledged sockets, and the sockets of each key. */
  const sockets = new Map<WsContext, AcknowledgedSocket>();
  const perScope = new Map<string, number>();
  const allowance = new UnprovenAllowance(
    options.unproven ?? Math.ceil(options.max * UNPROVEN_SHARE),
    (scope) => options.keys?.evidence.scopeKnownGood(scope) ?? false,
  );
  /**
   * The sockets counted against `max` (one closed to make room leaves at once), and of them those
   * without connection_init and those waiting for their key's proof; each Set oldest first.
   */
  const counted = new Set<WebSocket>();
  const uninitialised = new Set<WebSocket>();
  const proving = new Set<WebSocket>();
  wss.on('connection', (ws: WebSocket) => {
    counted.add(ws);
    uninitialised.add(ws);
    ws.once('close', () => {
      counted.delete(ws);
      uninitialised.delete(ws);
      proving.delete(ws);
    });
  });
  let closedAtCap = 0;
  /**
   * At the cap: closes (1013) the oldest socket without connection_init, else the oldest waiting for
   * its key's proof, else the oldest in the allowance; false when none is left to close.
   */
  function makeRoom(): boolean {
    const [oldestUninitialised] = uninitialised;
    const [oldestProving] = proving;
    const ws = oldestUninitialised ?? oldestProving ?? allowance.oldest()?.ws;
    if (closedAtCap++ % 1_000 === 0) {
      options.logger.warn(
        {
          maxWebSockets: options.max,
          closed: closedAtCap,
          which: oldestUninitialised
            ? 'oldest without connection_init'
            : oldestProving
              ? 'oldest waiting for its key'
              : ws
                ? 'oldest of a key not accepted lately'
                : 'none: upgrade answered 503',
        },
        'WebSocket cap reached (MAX_WEBSOCKETS)',
      );
    }
    if (!ws) return false;
    counted.delete(ws);
    uninitialised.delete(ws);
    proving.delete(ws);
    const socket = acknowledged.get(ws);
    if (socket) allowance.leave(socket);
    ws.close(TRY_AGAIN_LATER, 'Too many WebSockets: try again later');
    // A peer that never answers the close is cut, not kept for ws's 30 s.
    const cut = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
    cut.unref();
    ws.once('close', () => clearTimeout(cut));
    return true;
  }
  /** The acknowledged socket of each ws socket (to let one out of the allowance when it is closed). */
  const acknowledged = new WeakMap<WebSocket, AcknowledgedSocket>();
  const disposable = useServer(
    {
      // Never send an unexpected error's message to the client.
      isProd: true,
      // The key is checked before the ack, as an HTTP request's is before it runs.
      onConnect: async (ctx) => {
        uninitialised.delete(ctx.extra.socket);
        // Closed to make room before it sent connection_init: graphql-ws may still read it.
        if (!counted.has(ctx.extra.socket)) return false;
        const authorization = authorizationOf(ctx.extra.request, ctx.connectionParams);
        if (!authorization) {
          ctx.extra.socket.close(CloseCode.Unauthorized, 'Authorization: Bearer <API key> required');
          return false;
        }
        const scope = options.scopes.scopeOf(authorization);
        if (!withinKeyCap(ctx, scope)) return false;
        let unproven = !allowance.isKnownGood(scope);
        if (unproven && allowance.isFull()) {
          proving.add(ctx.extra.socket);
          const proof = options.keys
            ? await options.keys.evidence.proveKey(
                options.keys.callers.forOneCall(authorization, PROOF_DEADLINE_MS),
              )
            : ({ kind: 'unproven' } as const);
          proving.delete(ctx.extra.socket);
          // Closed while the REST API was asked (graphql-ws has called onClose already), or to make room.
          if (ctx.extra.socket.readyState !== OPEN || !counted.has(ctx.extra.socket)) return false;
          if (proof.kind === 'refused') {
            ctx.extra.socket.close(CloseCode.Unauthorized, 'The API key was not accepted');
            return false;
          }
          if (proof.kind === 'unproven') {
            ctx.extra.socket.close(TOO_MANY_FOR_KEY, 'Too many WebSockets for API keys not yet accepted');
            return false;
          }
          unproven = false;
          // Other sockets of this key may have been acknowledged meanwhile.
          if (!withinKeyCap(ctx, scope)) return false;
        }
        perScope.set(scope, (perScope.get(scope) ?? 0) + 1);
        const socket: AcknowledgedSocket = { scope, busyAt: Date.now(), ws: ctx.extra.socket };
        sockets.set(ctx, socket);
        acknowledged.set(ctx.extra.socket, socket);
        if (unproven) allowance.take(socket);
        return true;
      },
      onClose: (ctx) => {
        const socket = sockets.get(ctx);
        if (!socket) return;
        sockets.delete(ctx);
        allowance.leave(socket);
        const held = (perScope.get(socket.scope) ?? 1) - 1;
        if (held > 0) perScope.set(socket.scope, held);
        else perScope.delete(socket.scope);
      },
      // graphql-ws runs BRIDGED through `subscribe` (the bridge); the gateway parses the client's operation.
      onSubscribe: (ctx, _id, payload) => {
        const socket = sockets.get(ctx);
        if (socket) socket.busyAt = Date.now();
        // Checked before the bridge serialises the payload again (which deep nesting would overflow).
        const tooDeep = nestingError(payload);
        if (tooDeep) return [tooDeep];
        return {
          schema,
          document: BRIDGED,
          contextValue: {
            payload,
            headers: headersOf(ctx.extra.request, ctx.connectionParams),
            socket: ctx.extra.socket,
          } satisfies Bridged,
        };
      },
      subscribe: (args) => bridge(gateway, args.contextValue as Bridged, options.path),
      // The gateway's results are serialised already (errors formatted and masked): sent as they are.
      onNext: (_ctx, _id, _payload, _args, result) => result as FormattedExecutionResult,
    },
    wss,
  );
  /** Whether the key has a slot left under its cap; if not, the socket is closed with 4429. */
  function withinKeyCap(ctx: WsContext, scope: string): boolean {
    if ((perScope.get(scope) ?? 0) < options.perKey) return true;
    ctx.extra.socket.close(TOO_MANY_FOR_KEY, 'Too many WebSockets for this API key');
    return false;
  }
  // Idle sockets are closed: one sweep a fraction of the timeout, so none lives past 1.25× of it.
  const sweep = setInterval(
    () => {
      const now = Date.now();
      allowance.release();
      for (const [ctx, socket] of sockets) {
        if (Object.keys(ctx.subscriptions).length > 0) socket.busyAt = now;
        else if (now - socket.busyAt >= options.idleMs) {
          ctx.extra.socket.close(1000, 'Idle: no operation for a while');
        }
      }
    },
    Math.max(10, Math.floor(options.idleMs / 4)),
  );
  sweep.unref();
  return {
    handleUpgrade: (request, socket, head) =>
      wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request)),
    close: () => {
      clearInterval(sweep);
      for (const client of wss.clients) client.close(SERVICE_RESTART, RESTART_REASON);
      return Promise.resolve(disposable.dispose());
    },
  };
}

/** A socket's context as graphql-ws keeps it; `extra` carries the ws socket and upgrade request. */
type WsContext = Context<Record<string, unknown> | undefined, Extra>;

/** What the REST API said of keys lately: the upstream client's view of it (MerchantWalletClient). */
export interface KeyEvidenceSource {
  scopeKnownGood(scope: string): boolean;
  proveKey(caller: Caller): Promise<KeyProof>;
}

/** Past WEBSOCKETS_PER_KEY, or past the allowance with no answer on the key: clients retry with backoff. */
const TOO_MANY_FOR_KEY = 4429;

/** The share of MAX_WEBSOCKETS that sockets of keys not accepted lately may hold, all together. */
const UNPROVEN_SHARE = 0.05;

/** How long a socket past the allowance waits for the REST API to prove its key (one call, no retry). */
const PROOF_DEADLINE_MS = 5_000;

/** ws's WebSocket.OPEN. */
const OPEN = 1;

/** Closes a socket that makes room at MAX_WEBSOCKETS: graphql-ws clients retry it with backoff. */
const TRY_AGAIN_LATER = 1013;

/** How long a socket closed to make room has to answer the close before it is cut. */
const CLOSE_GRACE_MS = 1_000;
