import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import type { Gateway } from '../../src/yoga.ts';
import { type TestSandbox, withdrawalBody, withdrawalInput } from './sandbox.ts';
import { recordSuiteKey } from './suite-logs.ts';

/**
 * The withdrawal guarantee's harness, shared by the exactly-once property (two processes of one
 * release) and the upgrade test (the previous release beside this one): histories of concurrent
 * withdrawals by several API keys of one merchant (one read-only), keyed and unkeyed, through two
 * gateway processes that share only a real Redis, against the sandbox with its Idempotency-Key
 * extension off, with faults aimed at single requests (503 before the commit; a reset, or an
 * answer later than the gateway waits, after it) and other writers making identical payouts
 * straight on the REST API. Every key is then retried through both processes, and the answers and
 * what the REST API holds are checked against:
 *
 * - I1: every success for a key returns the same intent;
 * - I2: no intent is returned for two keys, or for a key and an unkeyed request;
 * - I3: at most one intent per key exists upstream;
 * - I4: a definite refusal is never answered as a success;
 * - I5: nothing answered `sent: false` was sent.
 */

export type Actor = 'k1' | 'k2' | 'readOnly';
export type Fault = 'none' | 'unavailable' | 'reset' | 'late' | 'slow';

export interface Op {
  /** Through gateway process A or B, or straight on the REST API as another writer. */
  via: 'A' | 'B' | 'direct';
  as: Actor;
  idempotencyKey: 'p1' | 'p2' | 'p3' | null;
  amount: '1.00' | '2.00';
  fault: Fault;
  startAfterMs: 0 | 40 | 120 | 300;
}

export const opArbitrary: fc.Arbitrary<Op> = fc.record({
  via: fc.constantFrom('A', 'B', 'A', 'B', 'direct'),
  as: fc.constantFrom<Actor>('k1', 'k1', 'k2', 'readOnly'),
  idempotencyKey: fc.constantFrom('p1', 'p2', 'p3', null),
  // Mostly one amount: identical payouts from different keys and requests are the hard case.
  amount: fc.constantFrom('1.00', '1.00', '1.00', '2.00'),
  fault: fc.constantFrom<Fault>('none', 'none', 'unavailable', 'reset', 'late', 'slow'),
  startAfterMs: fc.constantFrom(0, 40, 120, 300),
});

/** What one request was answered. */
export interface Answer {
  requestId: string;
  owner: string;
  as: Actor;
  amount: string;
  kind: 'success' | 'refused' | 'error';
  intentId?: string;
  code?: string;
  sent?: unknown;
  reason?: unknown;
}

export const MUTATION = `mutation Withdraw($input: CreateWithdrawalIntentInput!) {
  createWithdrawalIntent(input: $input) {
    __typename
    ... on CreateWithdrawalIntentSuccess { withdrawalIntent { restId } }
    ... on UserError { code }
  }
}`;

/** The histories' merchant: two read-write keys and a read-only one, recorded for the key scan. */
export async function historyMerchant(
  sandbox: TestSandbox,
): Promise<{ id: string; keys: Record<Actor, string> }> {
  const m = await sandbox.world.merchant();
  const second = await sandbox.admin('POST', `/merchants/${m.id}/api-keys`, {
    name: 'k2',
    access: 'read_write',
  });
  const keys = { k1: m.key, k2: second.key, readOnly: m.readOnlyKey };
  for (const key of Object.values(keys)) recordSuiteKey(key);
  return { id: m.id, keys };
}

export interface HarnessOptions {
  sandbox: TestSandbox;
  keys: Record<Actor, string>;
  /** The two processes; each is asked through its `fetch`. */
  processes: Record<'A' | 'B', Pick<Gateway, 'fetch'>>;
  /** The processes' UPSTREAM_HEADERS_TIMEOUT_MS: a fault answering later makes an unknown outcome. */
  headersTimeoutMs: number;
  /** The processes' WITHDRAWAL_LATE_COMMIT_MS: retries wait for it, so windows have closed. */
  lateCommitMs: number;
  /**
   * How late the `late` fault answers (default 3 × headersTimeoutMs). undici checks its headers
   * timeout on a coarse timer (up to about a second late), so to be sure of an answer the gateway
   * stopped waiting for, make it headersTimeoutMs + 1.5 s.
   */
  lateAnswerMs?: number;
}

/** Runs histories (Op lists) through the two processes and checks each against I1–I5. */
export function exactlyOnceHarness(options: HarnessOptions) {
  const { sandbox, keys, processes, headersTimeoutMs, lateCommitMs } = options;
  const lateAnswerMs = options.lateAnswerMs ?? headersTimeoutMs * 3;
  const faults: Record<Exclude<Fault, 'none'>, Record<string, unknown>> = {
    unavailable: { status: 503 },
    reset: { resetAfterRoute: true },
    late: { respondAfterMs: lateAnswerMs },
    // Slow, but within what the gateway waits for.
    slow: { respondAfterMs: Math.floor(headersTimeoutMs / 3) },
  };
  let sequence = 0;
  /** How often each answer came, over all histories: to show what was exercised. */
  const tally = new Map<string, number>();

  /** Runs one op (or its retry), aiming its fault at its own request only. */
  async function perform(
    op: Op,
    walletId: string,
    run: number,
    fault: Fault,
    direct: Set<string>,
  ): Promise<Answer | null> {
    const requestId = `run${run}-req${sequence++}`;
    if (fault !== 'none') {
      await sandbox.admin('POST', '/faults', {
        method: 'POST',
        path: '/external/v1/withdrawal-intents',
        requestId,
        times: 1,
        ...faults[fault],
      });
    }
    const key = keys[op.as];
    if (op.via === 'direct') {
      direct.add(requestId);
      // Another writer of the same merchant, straight on the REST API: not the gateway's to answer.
      await sandbox
        .call('POST', '/external/v1/withdrawal-intents', {
          key,
          body: withdrawalBody(walletId, { amount: op.amount }),
          headers: { 'x-request-id': requestId },
        })
        .catch(() => {});
      return null;
    }
    const input = withdrawalInput(walletId, {
      amount: op.amount,
      // Keys are per history: a key of an earlier history holds another wallet's payout.
      ...(op.idempotencyKey && { idempotencyKey: `${op.idempotencyKey}-h${run}` }),
    });
    const response = await processes[op.via].fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${key}`,
        'x-request-id': requestId,
      },
      body: JSON.stringify({ query: MUTATION, variables: { input } }),
    });
    const body = (await response.json()) as {
      data?: {
        createWithdrawalIntent: {
          __typename: string;
          withdrawalIntent?: { restId: string };
          code?: string;
        } | null;
      };
      errors?: { extensions?: Record<string, unknown> }[];
    };
    const result = body.data?.createWithdrawalIntent;
    const owner = op.idempotencyKey ? `${op.as}/${op.idempotencyKey}` : `unkeyed/${requestId}`;
    const base = { requestId, owner, as: op.as, amount: op.amount };
    if (result?.withdrawalIntent)
      return { ...base, kind: 'success', intentId: result.withdrawalIntent.restId };
    if (result?.code) return { ...base, kind: 'refused', code: result.code };
    const extensions = body.errors?.[0]?.extensions ?? {};
    return {
      ...base,
      kind: 'error',
      code: String(extensions.code),
      sent: extensions.sent,
      reason: extensions.reason,
    };
  }

  /** The invariants over one history's answers and what the REST API holds; a list of violations. */
  function violations(answers: readonly Answer[], direct: ReadonlySet<string>, walletId: string): string[] {
    const found: string[] = [];
    const requests = new Map(answers.map((answer) => [answer.requestId, answer]));
    const created = sandbox.sandbox.requests.filter(
      (entry) => entry.method === 'POST' && entry.createdId && requests.has(entry.requestId),
    );
    // I1 and I2.
    const byOwner = new Map<string, Set<string>>();
    const byIntent = new Map<string, Set<string>>();
    for (const answer of answers) {
      if (answer.kind !== 'success' || !answer.intentId) continue;
      byOwner.set(answer.owner, (byOwner.get(answer.owner) ?? new Set()).add(answer.intentId));
      byIntent.set(answer.intentId, (byIntent.get(answer.intentId) ?? new Set()).add(answer.owner));
    }
    for (const [owner, intents] of byOwner) {
      if (intents.size > 1) found.push(`I1: ${owner} was answered ${intents.size} intents: ${[...intents]}`);
    }
    for (const [intent, owners] of byIntent) {
      if (owners.size > 1) found.push(`I2: intent ${intent} was answered to ${[...owners].join(' and ')}`);
    }
    // I3: intents created upstream by the gateway's requests, per key.
    const upstream = new Map<string, string[]>();
    for (const entry of created) {
      const owner = requests.get(entry.requestId)?.owner ?? '';
      if (owner.startsWith('unkeyed/')) continue;
      upstream.set(owner, [...(upstream.get(owner) ?? []), entry.createdId as string]);
    }
    for (const [owner, intents] of upstream) {
      if (intents.length > 1)
        found.push(`I3: ${intents.length} intents exist upstream for ${owner}: ${intents}`);
    }
    // I2b: an intent answered to an owner was created by that owner's own request, or by a writer
    // outside the gateway: an identical payout made straight on the REST API inside an attempt's
    // window cannot be told from the attempt's own (the documented limit of reconciliation).
    const createdBy = new Map(
      sandbox.sandbox.requests
        .filter((entry) => entry.method === 'POST' && entry.createdId)
        .map((entry) => [entry.createdId as string, entry.requestId]),
    );
    const adopted = (answer: Answer) => direct.has(createdBy.get(answer.intentId ?? '') ?? '');
    for (const answer of answers) {
      if (answer.kind !== 'success' || adopted(answer)) continue;
      const maker = requests.get(createdBy.get(answer.intentId ?? '') ?? '');
      if (maker?.owner !== answer.owner) {
        found.push(
          `I2b: ${answer.owner} was answered ${answer.intentId}, made by ${maker?.owner ?? 'nobody seen'}`,
        );
      }
    }
    // I4: after a definite refusal (FORBIDDEN, UNAUTHENTICATED, a business refusal), the same key
    // and input never succeed, unless by adopting an outside writer's identical payout (above).
    const definite = (answer: Answer) =>
      (answer.kind === 'refused' && answer.code !== 'idempotency_key_reused') ||
      (answer.kind === 'error' && (answer.code === 'FORBIDDEN' || answer.code === 'UNAUTHENTICATED'));
    for (const answer of answers) {
      if (answer.kind !== 'success' || adopted(answer)) continue;
      const refused = answers.find(
        (other) => other.owner === answer.owner && other.amount === answer.amount && definite(other),
      );
      if (refused) found.push(`I4: ${answer.owner} was refused (${refused.code}) and also succeeded`);
    }
    // I5.
    for (const answer of answers) {
      if (answer.sent !== false) continue;
      if (
        sandbox.sandbox.requests.some(
          (entry) => entry.method === 'POST' && entry.requestId === answer.requestId,
        )
      ) {
        found.push(`I5: ${answer.requestId} answered sent: false, yet its POST reached the REST API`);
      }
    }
    if (found.length) found.push(`wallet ${walletId}; answers: ${JSON.stringify(answers)}`);
    return found;
  }

  /**
   * One history in a wallet of its own: its ops at their start times, then every key that was
   * used retried through both processes once its windows have closed. Its violations of I1–I5.
   */
  async function runHistory(history: readonly Op[], run: number, walletId: string): Promise<string[]> {
    await sandbox.admin('DELETE', '/faults');
    const answers: Answer[] = [];
    const direct = new Set<string>();
    await Promise.all(
      history.map(async (op) => {
        await sleep(op.startAfterMs);
        const answer = await perform(op, walletId, run, op.fault, direct);
        if (answer) answers.push(answer);
      }),
    );
    await sleep(lateCommitMs + 50);
    const keyed = new Map<string, Op>();
    for (const op of history) {
      if (op.via !== 'direct' && op.idempotencyKey) keyed.set(`${op.as}/${op.idempotencyKey}`, op);
    }
    for (const op of keyed.values()) {
      for (const via of ['A', 'B'] as const) {
        const answer = await perform({ ...op, via }, walletId, run, 'none', direct);
        if (answer) answers.push(answer);
      }
    }
    for (const answer of answers) {
      const name = `${answer.kind}:${answer.code ?? ''}${answer.reason ? `:${answer.reason}` : ''}`;
      tally.set(name, (tally.get(name) ?? 0) + 1);
    }
    return violations(answers, direct, walletId);
  }

  return { perform, violations, runHistory, tally };
}
