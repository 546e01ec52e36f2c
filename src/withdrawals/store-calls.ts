import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { GatewayError } from '../errors/errors.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import { LoopStalledError } from '../redis/command-bounds.ts';
import { IDEMPOTENCY_TTL_MS, NotAskedError, ReplicaAckError, StoreFullError } from './idempotency-store.ts';
import { UnknownRecordFormatError } from './record-format.ts';

/** The two ways the withdrawal service calls its store: guarded, or now or later (rule R8). */
export type StoreGuard = <T>(call: () => Promise<T>) => Promise<T>;

/**
 * Wraps a store call that decides whether the POST may be sent: any failure becomes
 * IDEMPOTENCY_UNAVAILABLE (`sent: false`) with the reason its cause names (R8).
 */
export function guardStore(
  metrics: Pick<GatewayMetrics, 'idempotency'> | undefined,
  logger: Pick<Logger, 'warn'> | undefined,
): StoreGuard {
  return async (call) => {
    try {
      return await call();
    } catch (error) {
      throw refusedUnsent(error, metrics, logger);
    }
  };
}

function refusedUnsent(
  error: unknown,
  metrics: Pick<GatewayMetrics, 'idempotency'> | undefined,
  logger: Pick<Logger, 'warn'> | undefined,
): GatewayError {
  const refused = (message: string, reason: string) =>
    new GatewayError('IDEMPOTENCY_UNAVAILABLE', message, {
      cause: error,
      extensions: { sent: false, reason },
    });
  if (error instanceof StoreFullError) {
    metrics?.idempotency('refused_full');
    return refused(
      `The withdrawal was not sent: ${error.message} (24 h each). Retry later, or without an idempotencyKey.`,
      'STORE_FULL',
    );
  }
  if (error instanceof UnknownRecordFormatError) {
    metrics?.idempotency('refused_format');
    logger?.warn({ err: error.message }, 'withdrawal refused unsent: a record this release cannot read');
    return refused(
      error.newer
        ? `The withdrawal was not sent: ${error.message}. Retry with the same idempotencyKey: a replica of the newer release will answer it.`
        : `The withdrawal was not sent: ${error.message}. This idempotencyKey stays refused until its record expires (24 h); check withdrawalIntents before sending the payout under a new key.`,
      'RECORD_FORMAT_UNKNOWN',
    );
  }
  if (error instanceof ReplicaAckError) {
    metrics?.idempotency('refused_unacknowledged');
    return refused(
      'The withdrawal was not sent: the record that guards it against a duplicate could not be copied to a Redis replica in time. Retry with the same idempotencyKey.',
      'REPLICA_UNACKNOWLEDGED',
    );
  }
  if (error instanceof LoopStalledError) {
    metrics?.idempotency('refused_busy');
    logger?.warn(
      { err: error.message, stalledMs: error.stalledMs },
      "withdrawal refused unsent: this process's event loop was stalled past the store's bound",
    );
    return refused(
      'The withdrawal was not sent: this gateway was too busy to hear the answer of the record that guards it against a duplicate in time. Retry with the same idempotencyKey.',
      'GATEWAY_BUSY',
    );
  }
  metrics?.idempotency('refused_unavailable');
  return refused(
    'The withdrawal was not sent: the record that guards it against a duplicate cannot be written right now. Retry with the same idempotencyKey.',
    'STORE_UNAVAILABLE',
  );
}

/** Whether a refused store call may have reached the store (and written something). */
export function wasAsked(error: unknown): boolean {
  const cause = error instanceof GatewayError ? error.cause : error;
  return !(cause instanceof NotAskedError || cause instanceof StoreFullError);
}

/**
 * A fenced or idempotent write that must happen, though not before the answer: tried now, then in
 * the background with a backoff from 1 s to 30 s for up to 24 h (R8). Never throws.
 */
export async function nowOrLater(write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
    return;
  } catch {}
  const giveUpAt = Date.now() + IDEMPOTENCY_TTL_MS;
  const retry = async () => {
    for (let wait = 1_000; Date.now() + wait < giveUpAt; wait = Math.min(wait * 2, 30_000)) {
      await sleep(wait, undefined, { ref: false });
      try {
        await write();
        return;
      } catch {}
    }
  };
  void retry();
}
