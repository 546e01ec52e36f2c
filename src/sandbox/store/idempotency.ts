import { conflict } from '../errors.ts';

/**
 * The sandbox's Idempotency-Key extension of POST /withdrawal-intents (the spec does not promise
 * one): for 24 h, (merchant, key) maps to the first answer and the fingerprint of its body.
 */

const TTL_MS = 24 * 60 * 60 * 1000;
/** Past this many keys, expired ones are swept on the next write. */
const SWEEP_ABOVE = 100_000;

interface Answer {
  fingerprint: string;
  status: number;
  body: string;
  expiresAt: number;
}

export class IdempotencyLog {
  private readonly answers = new Map<string, Answer>();

  /** The stored answer for (merchant, key), or a 409 when the key was used with another body. */
  replay(
    merchantId: string,
    key: string,
    fingerprint: string,
    now: number,
  ): { status: number; body: string } | null {
    const answer = this.answers.get(`${merchantId}\u0000${key}`);
    if (!answer || answer.expiresAt <= now) return null;
    if (answer.fingerprint !== fingerprint) {
      throw conflict(
        'idempotency_key_reused',
        'This Idempotency-Key was already used with a different request body.',
      );
    }
    return { status: answer.status, body: answer.body };
  }

  remember(
    merchantId: string,
    key: string,
    fingerprint: string,
    status: number,
    body: string,
    now: number,
  ): void {
    if (this.answers.size > SWEEP_ABOVE) {
      for (const [k, a] of this.answers) if (a.expiresAt <= now) this.answers.delete(k);
    }
    this.answers.set(`${merchantId}\u0000${key}`, { fingerprint, status, body, expiresAt: now + TTL_MS });
  }
}
